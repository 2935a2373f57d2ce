// Bayesian Bradley-Terry model (Wainer, "A Bayesian Bradley-Terry model to compare multiple
// ML algorithms on multiple data sets", Eq. 2), with the hyper-priors of its Appendix A:
//
//   win1[k] ~ Binomial(win1[k] + win2[k], inv_logit(beta[i1[k]] - beta[i2[k]]))
//   beta[a] ~ Normal(0, sigma)  independently  (partial pooling of the algorithms)
//   sigma   ~ LogNormal(0, s) | half-Cauchy(0, s) | half-Normal(0, s)     (`hyperprior`)
//
// This file and bbt_common.stanfunctions (the basis and the hyper-prior, shared with
// davidson.stan) are the single source of truth for the model: both engines (CmdStan through
// cmdstanpy, and PyStan's httpstan) compile them.
//
// Sampling coordinates (the posterior is exactly Eq. 2; only the sampler's view of it changes):
// the likelihood depends on differences of beta only, so the direction "all beta move
// together" is informed by the prior alone while the others are informed by the data. In the
// beta coordinates this makes every beta strongly correlated, which a diagonal mass matrix
// cannot undo (long trajectories, low ESS). We therefore sample beta_rot = basis' * beta in an
// orthonormal (Helmert) basis whose first vector is (1, ..., 1) / sqrt(n_alg). A rotation of
// iid Normal(0, sigma) variables is iid Normal(0, sigma), so beta_rot ~ normal(0, sigma) is the
// same prior. The first coordinate (the mean direction) is always non-centred; the others are
// centred when the data dominate and non-centred when they are sparse (see `use_centred`).
functions {
#include bbt_common.stanfunctions
}
data {
  int<lower=2> n_alg;                               // number of algorithms
  int<lower=0> n_pairs;                             // number of compared pairs
  array[n_pairs] int<lower=1, upper=n_alg> i1;      // first algorithm of pair k
  array[n_pairs] int<lower=1, upper=n_alg> i2;      // second algorithm of pair k
  array[n_pairs] int<lower=0> win1;                 // wins of i1[k] over i2[k]
  array[n_pairs] int<lower=0> win2;                 // wins of i2[k] over i1[k]
  int<lower=1, upper=3> hyperprior;                 // 1 lognormal, 2 half-Cauchy, 3 half-normal
  real<lower=0> prior_scale;                        // scale s of the hyper-prior (paper: 0.5)
}
transformed data {
  array[n_pairs] int n_games;
  for (k in 1:n_pairs) {
    n_games[k] = win1[k] + win2[k];
  }
  vector[n_pairs] wins = to_vector(win1);
  vector[n_pairs] games = to_vector(n_games);
  matrix[n_alg, n_alg] basis = helmert_basis(n_alg);
  int centred = use_centred(n_games, n_alg);
}
parameters {
  real<lower=0> sigma;
  // beta in the Helmert basis (see the header); the multiplier makes a coordinate non-centred.
  vector<multiplier=append_row(sigma, rep_vector(centred ? 1 : sigma, n_alg - 1))>[n_alg] beta_rot;
}
transformed parameters {
  vector[n_alg] beta = basis * beta_rot;
}
model {
  sigma ~ sigma_prior(hyperprior, prior_scale);
  beta_rot ~ normal(0, sigma);  // <=> beta ~ normal(0, sigma): the basis is orthonormal
  {
    // win1 ~ binomial_logit(n_games, eta), written as its kernel
    //   win1 * log inv_logit(eta) + win2 * log1m_inv_logit(eta) = win1 * eta - n * log1p_exp(eta)
    // (the binomial coefficient is a constant). One stable log1p_exp per pair instead of the
    // two that binomial_logit evaluates: measured ~35% faster gradients on 4950 pairs.
    vector[n_pairs] eta = beta[i1] - beta[i2];
    target += dot_product(wins, eta) - dot_product(games, log1p_exp(eta));
  }
}
generated quantities {
  // Replicated data for posterior predictive checks (same number of games per pair) and the
  // pointwise log-likelihood for WAIC / PSIS-LOO.
  array[n_pairs] int win1_rep;
  vector[n_pairs] log_lik;
  {
    vector[n_pairs] eta = beta[i1] - beta[i2];
    win1_rep = binomial_rng(n_games, inv_logit(eta));
    for (k in 1:n_pairs) {
      log_lik[k] = binomial_logit_lpmf(win1[k] | n_games[k], eta[k]);
    }
  }
}
