// Bayesian hierarchical correlated t-test (Corani et al. 2017; Benavoli et al. 2017,
// JMLR 18(77), Sec. 4.3, Eq. 12-19).
//
// x_i ~ MVN(1 mu_i, Sigma_i), Sigma_i = sigma_i^2 ((1 - rho_i) I + rho_i 1 1')   (12)
// mu_i ~ t(mu_0, sigma_0, nu)                                                     (13)
// sigma_i ~ unif(0, 1000 * mean_i(sd_i))                                          (14)
// nu ~ Gamma(alpha, beta), alpha ~ unif(0.5, 5), beta ~ unif(0.05, 0.15)          (15-17)
// mu_0 ~ unif(-mu0_bound, mu0_bound) (paper: -1, 1), sigma_0 ~ unif(0, 1000 sd(xbar))  (18-19)
//
// The likelihood of a data set depends on its fold differences only through n, their
// mean and their sum of squared deviations ss: with c1 = 1 - rho, c2 = 1 + (n - 1) rho,
//   (x - mu 1)' Sigma^-1 (x - mu 1) = ss / (sigma^2 c1) + n (xbar - mu)^2 / (sigma^2 c2)
//   log det Sigma = 2 n log sigma + log c2 + (n - 1) log c1,
// so one evaluation costs O(q) instead of O(q n^2) with the full n x n inverse.
//
// The sampler works on the differences divided by `scale` (the mean within-data-set sd),
// so that its step sizes do not depend on the units of the scores; the generated
// quantities give every parameter back in the scores' units. Each mu_i is centred or not
// as its data decide (`centred`): where the folds pin mu_i down more tightly than the spread
// of the data sets does, the centred form samples well; where they say little, the centred
// form has the funnel NUTS cannot cross, and mu_i = mu0 + sigma0 * z_i avoids it.
data {
  int<lower=1> q;                       // data sets
  array[q] int<lower=2> n;              // fold results per data set
  vector[q] xbar;                       // mean difference per data set
  vector<lower=0>[q] ss;                // sum of squared deviations from xbar
  vector<lower=0, upper=1>[q] rho;      // correlation of the fold results (1 / k)
  real<lower=0> scale;                  // units of the sampler (mean within sd)
  real<lower=0> sigma_low;              // floor of sigma_i (scores' units; > 0 for sd = 0)
  real<lower=0> sigma_high;             // 1000 * mean sd (Eq. 14)
  real<lower=0> sigma0_high;            // 1000 * sd of the xbar (Eq. 19)
  real<lower=0> mu0_bound;              // mu_0 ~ unif(-mu0_bound, mu0_bound) (Eq. 18)
  array[q] int<lower=0, upper=1> centred;  // 1: mu_i itself is the parameter
}
transformed data {
  vector[q] xs = xbar / scale;
  vector[q] ss_s = ss / square(scale);
  vector[q] n_real = to_vector(n);
  vector[q] c1 = 1 - rho;
  vector[q] c2 = 1 + (n_real - 1) .* rho;
  real log_const = -0.5 * sum(n_real * log(2 * pi()) + log(c2) + (n_real - 1) .* log(c1));
}
parameters {
  real<lower=-mu0_bound / scale, upper=mu0_bound / scale> mu0_s;
  real<lower=0, upper=sigma0_high / scale> sigma0_s;
  real<lower=0.5, upper=5> alpha;
  real<lower=0.05, upper=0.15> beta;
  real<lower=0> nu;
  vector[q] z;
  vector<lower=sigma_low / scale, upper=sigma_high / scale>[q] sigma_s;
}
transformed parameters {
  vector[q] mu_s;
  for (i in 1:q) {
    mu_s[i] = centred[i] ? z[i] : mu0_s + sigma0_s * z[i];
  }
}
model {
  vector[q] var_s = square(sigma_s);
  nu ~ gamma(alpha, beta);
  for (i in 1:q) {
    if (centred[i]) {
      z[i] ~ student_t(nu, mu0_s, sigma0_s);
    } else {
      z[i] ~ student_t(nu, 0, 1);
    }
  }
  // uniform priors of mu0, sigma0, alpha, beta, sigma: implied by the bounds
  target += log_const - sum(n_real .* log(sigma_s))
            - 0.5 * sum(ss_s ./ (var_s .* c1) + n_real .* square(xs - mu_s) ./ (var_s .* c2));
}
generated quantities {
  real mu0 = mu0_s * scale;
  real sigma0 = sigma0_s * scale;
  vector[q] mu = mu_s * scale;
  vector[q] sigma = sigma_s * scale;
}
