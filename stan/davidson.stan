// Bradley-Terry model with ties after Davidson (1970), Eq. 7 of Wainer, "A Bayesian
// Bradley-Terry model to compare multiple ML algorithms on multiple data sets", done right:
// the games of a pair have three outcomes, so their counts are one multinomial draw,
//
//   (win1[k], win2[k], ties[k]) ~ Multinomial(N[k], softmax([b1, b2, nu + (b1 + b2) / 2]'))
//
// with b1 = beta[i1[k]], b2 = beta[i2[k]], N[k] = win1[k] + win2[k] + ties[k], and the same
// hierarchical prior on beta as bbt.stan. The reference implementation (bbtcomp) multiplies two
// binomials instead, which is not this likelihood and is not symmetric in the two players, and
// it forces nu >= 0, i.e. P(tie | equal strength) >= 1/3. Here nu is any real number.
//
// Prior on nu: for two equally strong algorithms P(tie) = exp(nu) / (2 + exp(nu)), so nu = 0
// means 1/3. normal(0, 2) puts 95% of its mass on nu in [-4, 4], i.e. P(tie | equal strength)
// between about 0.01 and 0.96: weakly informative, centred on "no preference", and wide enough
// for rare ties (a strict tie rule) as well as frequent ones (a wide local ROPE).
//
// Sampling coordinates: beta is sampled in an orthonormal (Helmert) basis exactly as in
// bbt.stan, where the reasons are given; the posterior is unchanged. The basis and the
// hyper-prior come from bbt_common.stanfunctions, shared with bbt.stan.
functions {
#include bbt_common.stanfunctions
}
data {
  int<lower=2> n_alg;
  int<lower=0> n_pairs;
  array[n_pairs] int<lower=1, upper=n_alg> i1;
  array[n_pairs] int<lower=1, upper=n_alg> i2;
  array[n_pairs] int<lower=0> win1;                 // wins of i1[k] over i2[k]
  array[n_pairs] int<lower=0> win2;                 // wins of i2[k] over i1[k]
  array[n_pairs] int<lower=0> ties;                 // ties between i1[k] and i2[k]
  int<lower=1, upper=3> hyperprior;                 // 1 lognormal, 2 half-Cauchy, 3 half-normal
  real<lower=0> prior_scale;
}
transformed data {
  array[n_pairs] int n_games;
  for (k in 1:n_pairs) {
    n_games[k] = win1[k] + win2[k] + ties[k];
  }
  vector[n_pairs] w1 = to_vector(win1);
  vector[n_pairs] w2 = to_vector(win2);
  vector[n_pairs] tt = to_vector(ties);
  matrix[n_alg, n_alg] basis = helmert_basis(n_alg);
  int centred = use_centred(n_games, n_alg);
}
parameters {
  real<lower=0> sigma;
  vector<multiplier=append_row(sigma, rep_vector(centred ? 1 : sigma, n_alg - 1))>[n_alg] beta_rot;
  real nu;
}
transformed parameters {
  vector[n_alg] beta = basis * beta_rot;
}
model {
  sigma ~ sigma_prior(hyperprior, prior_scale);
  beta_rot ~ normal(0, sigma);
  nu ~ normal(0, 2);
  {
    // Multinomial log-likelihood without its constant coefficient, vectorised over the pairs:
    // log p(outcome) = eta(outcome) - log_sum_exp(eta), summed with the outcome counts.
    // Equal, up to that constant, to multinomial_logit_lpmf per pair (see log_lik below).
    vector[n_pairs] b1 = beta[i1];
    vector[n_pairs] b2 = beta[i2];
    vector[n_pairs] eta_tie = nu + 0.5 * (b1 + b2);
    vector[n_pairs] log_norm = log_sum_exp(log_sum_exp(b1, b2), eta_tie);
    target += dot_product(w1, b1 - log_norm) + dot_product(w2, b2 - log_norm)
              + dot_product(tt, eta_tie - log_norm);
  }
}
generated quantities {
  // Replicated wins and ties for posterior predictive checks (win2_rep = N - win1_rep -
  // ties_rep), and the pointwise log-likelihood of each pair's multinomial outcome.
  array[n_pairs] int win1_rep;
  array[n_pairs] int ties_rep;
  vector[n_pairs] log_lik;
  for (k in 1:n_pairs) {
    vector[3] eta = [beta[i1[k]], beta[i2[k]], nu + 0.5 * (beta[i1[k]] + beta[i2[k]])]';
    array[3] int rep = multinomial_logit_rng(eta, n_games[k]);
    win1_rep[k] = rep[1];
    ties_rep[k] = rep[3];
    log_lik[k] = multinomial_logit_lpmf({win1[k], win2[k], ties[k]} | eta);
  }
}
