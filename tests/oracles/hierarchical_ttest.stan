// Bayesian hierarchical correlated t-test (Corani, Benavoli, Demsar, Mangili and Zaffalon,
// Machine Learning 106(11), 2017; Benavoli, Corani, Demsar and Zaffalon, JMLR 18(77), 2017,
// Sec. 4.3, Eq. 12-19):
//
// x_i ~ MVN(1 mu_i, Sigma_i), Sigma_i = sigma_i^2 ((1 - rho_i) I + rho_i 1 1')   (12)
// mu_i ~ t(mu_0, sigma_0, nu)                                                     (13)
// sigma_i ~ unif(0, sigma_high = 1000 * mean_i(sd_i))                             (14)
// nu - nu_shift ~ Gamma(alpha, beta), alpha ~ unif, beta ~ unif                   (15-17)
// mu_0 ~ unif(-mu0_bound, mu0_bound), sigma_0 ~ unif(0, 1000 sd(xbar))            (18-19)
//
// (nu_shift 0 is the paper's Eq. 15; its authors' code and baycomp give nu - 1 the Gamma.)
// The same posterior, written so that NUTS mixes:
// * Sufficient statistics: 1 is an eigenvector of Sigma_i, so with c1 = 1 - rho and
//   c2 = 1 + (n - 1) rho the fold mean xbar_i ~ N(mu_i, sigma_i^2 c2 / n) and the sum of
//   squared deviations ss_i / (sigma_i^2 c1) ~ chi^2(n - 1) are independent; one
//   evaluation costs O(q).
// * The Student t as a scale mixture: mu_i ~ N(mu_0, sigma_0^2 / lambda_i),
//   lambda_i ~ Gamma(nu / 2, nu / 2). Given lambda_i, mu_i is integrated out exactly,
//   xbar_i ~ N(mu_0, sigma_0^2 / lambda_i + sigma_i^2 c2 / n), so the funnel between
//   sigma_0 and the mu_i is gone; mu_i is drawn from its normal conditional afterwards.
// * lambda_i non-centred: log lambda_i = m(nu) + s(nu) z_i with m, s the mean and sd of
//   log Gamma(nu / 2, nu / 2); the density of lambda_i is exactly the Gamma (with the
//   Jacobian), while z_i stays near a standard normal whatever nu is.
// * alpha and beta integrated out: the prior of nu' = nu - nu_shift is
//   E_{alpha, beta}[Gamma(nu' | alpha, beta)], and the integral over beta is closed:
//   (alpha / nu'^2) (Q(alpha + 1, beta_low nu') - Q(alpha + 1, beta_high nu')) / (beta_high -
//   beta_low), Q the regularised upper incomplete gamma; the integral over alpha is
//   Gauss-Legendre quadrature (nodes and weights from the caller, relative error < 1e-6).
// * The sampler works on the differences divided by `scale` (the mean within-data-set
//   sd): mu0_s, sigma0_s and sigma_s are in those units, nu and mu in the scores' units.
data {
  int<lower=1> q;                       // data sets
  array[q] int<lower=2> n;              // fold results per data set
  vector[q] xbar;                       // mean difference per data set
  vector<lower=0>[q] ss;                // sum of squared deviations from xbar (> 0)
  vector<lower=0, upper=1>[q] rho;      // correlation of the fold results (1 / k)
  real<lower=0> scale;                  // units of the sampler (mean within sd)
  real<lower=0> sigma_high;             // 1000 * mean sd (Eq. 14)
  real<lower=0> sigma0_high;            // 1000 * sd of the xbar (Eq. 19)
  real<lower=0> mu0_bound;              // mu_0 ~ unif(-mu0_bound, mu0_bound) (Eq. 18)
  real<lower=0> nu_shift;               // nu - nu_shift ~ Gamma(alpha, beta)
  real<lower=0> beta_low;               // beta ~ unif(beta_low, beta_high) (Eq. 17)
  real<lower=beta_low> beta_high;
  int<lower=1> n_nodes;                 // Gauss-Legendre nodes over alpha's range (Eq. 16)
  vector<lower=0>[n_nodes] alpha_node;
  vector<lower=0>[n_nodes] alpha_weight;  // sum to 1 (the uniform density included)
}
transformed data {
  vector[q] xs = xbar / scale;
  vector[q] ss_s = ss / square(scale);
  vector[q] n_real = to_vector(n);
  vector[q] c1 = 1 - rho;
  vector[q] se2_per_var = (1 + (n_real - 1) .* rho) ./ n_real;  // var(xbar_i) / sigma_i^2
  vector[n_nodes] log_alpha_weight = log(alpha_weight) + log(alpha_node);
}
parameters {
  real<lower=-mu0_bound / scale, upper=mu0_bound / scale> mu0_s;
  real<lower=0, upper=sigma0_high / scale> sigma0_s;
  real<lower=0> nu_free;                // nu - nu_shift
  vector[q] z;                          // lambda_i, non-centred
  vector<lower=0, upper=sigma_high / scale>[q] sigma_s;
}
model {
  real nu = nu_free + nu_shift;
  real half = 0.5 * nu;
  vector[q] log_lambda = digamma(half) - log(half) + sqrt(trigamma(half)) * z;
  vector[q] var_s = square(sigma_s);
  // prior of nu: alpha and beta integrated out (see the header)
  {
    vector[n_nodes] terms;
    for (k in 1:n_nodes) {
      terms[k] = log_alpha_weight[k]
                 + log_diff_exp(log(gamma_q(alpha_node[k] + 1, beta_low * nu_free)),
                                log(gamma_q(alpha_node[k] + 1, beta_high * nu_free)));
    }
    target += log_sum_exp(terms) - 2 * log(nu_free);
  }
  // lambda_i ~ Gamma(nu / 2, nu / 2), with the Jacobian of z -> lambda
  target += gamma_lpdf(exp(log_lambda) | half, half) + sum(log_lambda)
            + q * 0.5 * log(trigamma(half));
  // uniform priors of mu0, sigma0, sigma: implied by the bounds
  target += -sum((n_real - 1) .* log(sigma_s)) - 0.5 * sum(ss_s ./ (var_s .* c1));
  target += normal_lpdf(xs | mu0_s, sqrt(square(sigma0_s) * exp(-log_lambda)
                                          + var_s .* se2_per_var));
}
generated quantities {
  // mu0 = mu0_s * scale, sigma0 = sigma0_s * scale and sigma = sigma_s * scale are
  // rescaled by the caller (fewer outputs to send)
  real nu = nu_free + nu_shift;
  vector[q] mu;
  {
    // mu_i | rest ~ normal: the precision-weighted mean of mu_0 and xbar_i
    real half = 0.5 * nu;
    vector[q] lambda = exp(digamma(half) - log(half) + sqrt(trigamma(half)) * z);
    vector[q] prior_prec = lambda / square(sigma0_s);
    vector[q] data_prec = 1 ./ (square(sigma_s) .* se2_per_var);
    vector[q] post_var = 1 ./ (prior_prec + data_prec);
    vector[q] post_mean = post_var .* (prior_prec * mu0_s + data_prec .* xs);
    mu = to_vector(normal_rng(post_mean, sqrt(post_var))) * scale;
  }
}
