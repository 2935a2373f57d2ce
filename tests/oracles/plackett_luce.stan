// Plackett-Luce model of rankings with a Dirichlet prior on the normalised weights
// (Rojas-Delgado et al., "Bayesian Performance Analysis for Algorithm Ranking Comparison",
// IEEE TEVC 2022, Sec. III-A Eq. 5 and III-B; Calvo et al.'s prior "PLD": alpha_i = 1 is flat).
//
// Pr[pi | theta] = prod_i theta_pi(i) / sum_{j >= i} theta_pi(j), sum(theta) = 1, so that
// theta_i = Pr[algorithm i is ranked first]. A ranking may cover only some algorithms (those
// with a result on that data set): its probability is the PL marginal on that subset, which
// is again PL with the same weights (Luce's choice axiom). Rankings carry weights, so that a
// tie can be split into its orderings (bbt_widget.ranking).
//
// The log-likelihood of all rankings is a weighted sum of log theta_i (each algorithm at
// each position but the last) minus a weighted sum of log(sum of theta over the algorithms
// still to be placed). The caller collects the weights per algorithm (`placed`) and per
// distinct set of algorithms still to be placed (rows of `sets`, weights `set_weight`), so
// one evaluation is one matrix-vector product, whatever the number of rankings.
data {
  int<lower=2> n_alg;
  int<lower=1> n_set;
  matrix<lower=0, upper=1>[n_set, n_alg] sets;  // 1 where the algorithm is in the set
  vector<lower=0>[n_set] set_weight;
  vector<lower=0>[n_alg] placed;                // weighted times chosen from a set
  vector<lower=0>[n_alg] alpha;                 // Dirichlet concentration
}
parameters {
  simplex[n_alg] theta;
}
model {
  theta ~ dirichlet(alpha);
  target += dot_product(placed, log(theta)) - dot_product(set_weight, log(sets * theta));
}
