// Bayesian Bradley-Terry model with data sets in groups (families): group-level abilities
// partially pooled towards the pooled abilities, so that a small group borrows strength from
// the others.
//
//   win1[k] ~ Binomial(win1[k] + win2[k], inv_logit(beta_group[g, i1[k]] - beta_group[g, i2[k]]))
//             where g = group[k] (each row k is one pair's counts on one group's data sets)
//   beta_group[g, a] ~ Normal(beta[a], tau)
//   beta[a]  ~ Normal(0, sigma)       (the pooled abilities, as in bbt.stan)
//   sigma    ~ the hyper-prior of bbt.stan (`hyperprior`, `prior_scale`)
//   tau      ~ half-Normal(0, tau_scale)
//
// tau is the spread of an ability between groups on the logit scale. The default scale 0.5
// (bbt_widget.core.options.GROUP_TAU_SCALE) puts 95% of the prior mass on tau < 1: a group may
// move P(a > b) from 0.5 to about 0.73 (one logit unit), a large per-family effect, while
// pulling groups towards the pooled abilities when their data say nothing else.
//
// Sampling coordinates: the pooled abilities are sampled in the Helmert basis exactly as in
// bbt.stan (see its header). The group deviations are non-centred, beta_group = beta + tau * z
// with z ~ std_normal(): tau is often small (groups that agree), where a centred
// parameterisation would form a funnel.
functions {
#include bbt_common.stanfunctions
}
data {
  int<lower=2> n_alg;                               // number of algorithms
  int<lower=2> n_groups;                            // number of groups of data sets
  int<lower=0> n_pairs;                             // rows: (group, pair) with games
  array[n_pairs] int<lower=1, upper=n_groups> group;  // group of row k
  array[n_pairs] int<lower=1, upper=n_alg> i1;      // first algorithm of row k
  array[n_pairs] int<lower=1, upper=n_alg> i2;      // second algorithm of row k
  array[n_pairs] int<lower=0> win1;                 // wins of i1[k] over i2[k] in group[k]
  array[n_pairs] int<lower=0> win2;                 // wins of i2[k] over i1[k] in group[k]
  int<lower=1, upper=3> hyperprior;                 // 1 lognormal, 2 half-Cauchy, 3 half-normal
  real<lower=0> prior_scale;                        // scale of the hyper-prior on sigma
  real<lower=0> tau_scale;                          // scale of the half-normal prior on tau
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
  // positions of (group, algorithm) in beta_group, which is stored group by group
  array[n_pairs] int j1;
  array[n_pairs] int j2;
  for (k in 1:n_pairs) {
    j1[k] = (group[k] - 1) * n_alg + i1[k];
    j2[k] = (group[k] - 1) * n_alg + i2[k];
  }
}
parameters {
  real<lower=0> sigma;
  vector<multiplier=append_row(sigma, rep_vector(centred ? 1 : sigma, n_alg - 1))>[n_alg] beta_rot;
  real<lower=0> tau;
  matrix[n_alg, n_groups] z;                        // non-centred group deviations
}
transformed parameters {
  vector[n_alg] beta = basis * beta_rot;
  // beta_group[(g - 1) * n_alg + a]: ability of algorithm a in group g (a flat vector, so
  // that both engines write it in this one order)
  vector[n_alg * n_groups] beta_group = to_vector(rep_matrix(beta, n_groups) + tau * z);
}
model {
  sigma ~ sigma_prior(hyperprior, prior_scale);
  beta_rot ~ normal(0, sigma);
  tau ~ normal(0, tau_scale);
  to_vector(z) ~ std_normal();
  {
    vector[n_pairs] eta = beta_group[j1] - beta_group[j2];
    target += dot_product(wins, eta) - dot_product(games, log1p_exp(eta));
  }
}
generated quantities {
  array[n_pairs] int win1_rep;
  vector[n_pairs] log_lik;
  {
    vector[n_pairs] eta = beta_group[j1] - beta_group[j2];
    win1_rep = binomial_rng(n_games, inv_logit(eta));
    for (k in 1:n_pairs) {
      log_lik[k] = binomial_logit_lpmf(win1[k] | n_games[k], eta[k]);
    }
  }
}
