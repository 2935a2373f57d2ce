// Plackett-Luce model of rankings with a Dirichlet prior on the normalised weights
// (Rojas-Delgado et al., "Bayesian Performance Analysis for Algorithm Ranking Comparison",
// Sec. III-A Eq. 5 and III-B; Calvo et al.'s prior, "PLD": alpha_i = 1 is flat).
//
// Pr[pi | theta] = prod_i theta_pi(i) / sum_{j >= i} theta_pi(j), sum(theta) = 1, so that
// theta_i = Pr[algorithm i is ranked first]. A ranking may cover only some algorithms (those
// with a result on that data set): its probability is the PL marginal on that subset, which
// is again PL with the same weights (Luce's choice axiom). Rankings carry weights so that a
// tie can be split into its orderings (bbt_widget.ranking): the log-likelihood of each is
// multiplied by its weight.
data {
  int<lower=2> n_alg;
  int<lower=0> n_rank;                          // rankings (orderings of the data sets)
  int<lower=0> n_order;                         // sum(len)
  array[n_rank] int<lower=2, upper=n_alg> len;  // algorithms ranked in each
  array[n_order] int<lower=1, upper=n_alg> order;  // the rankings, best first, concatenated
  vector<lower=0>[n_rank] weight;
  vector<lower=0>[n_alg] alpha;                 // Dirichlet concentration
}
parameters {
  simplex[n_alg] theta;
}
model {
  vector[n_alg] log_theta = log(theta);
  int pos = 1;
  theta ~ dirichlet(alpha);
  for (r in 1:n_rank) {
    real acc = negative_infinity();  // log of the weights still to be placed, from the back
    real lp = 0;
    for (i in 1:len[r]) {
      real lt = log_theta[order[pos + len[r] - i]];
      acc = log_sum_exp(acc, lt);
      lp += lt - acc;
    }
    target += weight[r] * lp;
    pos += len[r];
  }
}
