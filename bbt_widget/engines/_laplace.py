"""Laplace approximation of a BBT posterior from a compiled Stan model's log density (numpy only).

Used by the PyStan child (``_pystan_child.py`` imports it from beside itself, so this module
must not import ``bbt_widget``) for ``engines.laplace(engine="pystan")``: the normal
approximation at the posterior mode on Stan's unconstrained scale, with the Jacobian of the
constraining transforms included (what CmdStan's ``laplace`` method does), mapped back through
the model's own ``write_array``. On the paper's data and the 16 x 132 PMLB table it is about as
close to a full NUTS fit as a short NUTS run of 300 draws (closer HDIs, means up to 0.008 off)
(``benchmarks/bench_laplace.py``). Its :func:`replicate` also serves the numpy engine's
Davidson sampler.

The ``module`` it takes offers ``constrained_param_names``, ``log_prob``, ``log_prob_grad``
and ``write_array``; the child adapts PyStan's public ``Model`` methods (``log_prob``,
``grad_log_prob``, ``constrain_pars``) to them, with the data as numpy arrays
(:func:`stan_arrays`). Each of those calls is a request to PyStan's model server, some
hundreds per approximation: the widget's previews use the numpy engine's approximation
instead (:meth:`._numpy.NumpyEngine.laplace`, milliseconds in the calling process).

Stan's autodiff must run on a process's main thread (its stack is thread-local and only set up
there): call these functions from the child's main thread, never from a thread pool.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Newton iterations before giving up (the BBT posteriors converge in 4-8).
MAX_ITERATIONS = 100
#: Convergence: the largest |gradient| of the log density on the unconstrained scale.
GRADIENT_TOLERANCE = 1e-6
#: The ``parameters`` blocks of the programs this approximates. Each is a scalar with bounds or
#: a vector with a multiplier, so its unconstrained size equals its constrained size, which
#: counts the unconstrained coordinates from Stan's column names.
PARAMETERS = {"bbt": ("sigma", "beta_rot"), "davidson": ("sigma", "beta_rot", "nu")}


class LaplaceError(RuntimeError):
    """The mode or the curvature needed by the approximation could not be found."""


class _Density:
    """The log density (with Jacobian) and its gradient, at unconstrained points."""

    def __init__(self, module: Any, data: dict[str, Any]) -> None:
        self.module = module
        self.data = data

    def lp(self, x: np.ndarray) -> float:
        try:
            return float(self.module.log_prob(self.data, x.tolist(), True))
        except (RuntimeError, ValueError):  # Stan rejects the point (e.g. an overflow)
            return -math.inf

    def grad(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.module.log_prob_grad(self.data, x.tolist(), True))

    def hessian(
        self, x: np.ndarray, g: np.ndarray | None = None, coords: np.ndarray | None = None
    ) -> np.ndarray:
        """Finite differences of the (exact, autodiff) gradient: forward during the search
        (``g``, the full gradient at ``x``, given: one gradient per coordinate), central at the
        mode (two per coordinate, for the covariance). ``coords``: only these coordinates'
        block (default all)."""
        coords = np.arange(x.size) if coords is None else coords
        h = 1e-5 * np.maximum(1.0, np.abs(x))
        rows = np.empty((coords.size, coords.size))
        for k, i in enumerate(coords):
            step = np.zeros(x.size)
            step[i] = h[i]
            if g is None:
                rows[k] = ((self.grad(x + step) - self.grad(x - step)) / (2 * h[i]))[coords]
            else:
                rows[k] = ((self.grad(x + step) - g) / h[i])[coords]
        hessian: np.ndarray = (rows + rows.T) / 2
        return hessian


def _newton_step(hessian: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The Newton direction, damped (Levenberg) until the negative Hessian is positive
    definite, so that it always climbs."""
    precision = -hessian
    damping = 0.0
    scale = max(1e-8, float(np.max(np.abs(np.diag(precision)))))
    for _ in range(60):
        try:
            factor = np.linalg.cholesky(precision + damping * np.eye(g.size))
        except np.linalg.LinAlgError:
            damping = max(2 * damping, 1e-6 * scale)
            continue
        return np.linalg.solve(factor.T, np.linalg.solve(factor, g))
    return g / scale  # no curvature to use: a small gradient step


def find_mode(module: Any, data: dict[str, Any], n_params: int) -> tuple[np.ndarray, int]:
    """The mode of the log density on the unconstrained scale, and the iterations it took.

    Newton's method with a backtracking line search, from the origin (Stan's default initial
    point, at the centre of its uniform(-2, 2) initialisation): first over the abilities (and
    Davidson's ``nu``) with ``sigma``, the first coordinate in both programs, held at its
    initial value, then over all coordinates from there.

    Why two stages: from the origin, where every ability is 0 and the data pull on nothing,
    the joint search could step into the funnel of the hierarchical prior. Along abilities
    near 0 a smaller ``sigma`` keeps raising the density (the ``-n log sigma`` of the normal
    prior) until the hyper-prior stops it, at a spurious mode: on the paper's data with a
    log-normal scale of 1.7, ``sigma`` near 1e-5, where the search stalled and the preview
    never came. With the abilities first fitted to the data at ``sigma = 1`` the search starts
    in the basin of the posterior's own mode.

    Raises
    ------
    LaplaceError
        When a stage does not converge within ``MAX_ITERATIONS``.
    """
    density = _Density(module, data)
    x = np.zeros(n_params)
    if not math.isfinite(density.lp(x)):
        raise LaplaceError("the log density is not finite at the initial point")
    iterations = 0
    if n_params > 1:
        x, iterations = _climb(density, x, np.arange(1, n_params))
    x, joint = _climb(density, x, np.arange(n_params))
    return x, iterations + joint


def _climb(density: _Density, x: np.ndarray, coords: np.ndarray) -> tuple[np.ndarray, int]:
    """Newton's method over ``coords`` (the other coordinates held), from ``x``: the point
    where the gradient over ``coords`` vanishes, and the iterations it took."""
    lp = density.lp(x)
    g = density.grad(x)
    for iteration in range(1, MAX_ITERATIONS + 1):
        if np.max(np.abs(g[coords]), initial=0.0) < GRADIENT_TOLERANCE:
            return x, iteration - 1
        step = np.zeros(x.size)
        step[coords] = _newton_step(density.hessian(x, g, coords), g[coords])
        t = 1.0
        while t > 1e-10:
            candidate = x + t * step
            lp_new = density.lp(candidate)
            if math.isfinite(lp_new) and lp_new >= lp - 1e-12 * abs(lp):
                break
            t /= 2
        else:
            raise LaplaceError(f"the mode search stalled after {iteration} iterations")
        x, lp = candidate, lp_new
        g = density.grad(x)
    if np.max(np.abs(g[coords]), initial=0.0) < GRADIENT_TOLERANCE * 1e3:
        return x, MAX_ITERATIONS  # close enough for a preview
    raise LaplaceError(f"the mode search did not converge in {MAX_ITERATIONS} iterations")


def replicate(
    model: str,
    data: dict[str, Any],
    beta: np.ndarray,
    nu: np.ndarray | None,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """The generated quantities of ``stan/bbt.stan`` / ``stan/davidson.stan`` for draws of beta
    (draws, n_alg) and nu (draws,): replicated counts and the pointwise log-likelihood.

    The same formulas as those programs' ``generated quantities`` blocks. They are repeated
    here because httpstan's ``write_array`` seeds its random number generator with 0 on every
    call, so Stan's own replicates would reuse one random stream for every draw. The test
    suite compares both on the same draws' predictive distributions.
    """
    i1 = np.asarray(data["i1"], dtype=np.intp) - 1
    i2 = np.asarray(data["i2"], dtype=np.intp) - 1
    win1 = np.asarray(data["win1"], dtype=np.int64)
    win2 = np.asarray(data["win2"], dtype=np.int64)
    # Bradley-Terry has no ties: zeros make one formula serve both models' counts
    ties = np.asarray(data["ties"], dtype=np.int64) if model == "davidson" else np.zeros_like(win1)
    n_games = win1 + win2 + ties
    b1, b2 = beta[:, i1], beta[:, i2]
    # log of the multinomial coefficient of each pair's observed counts (a constant per pair)
    log_coef = np.array(
        [
            math.lgamma(n + 1) - math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(c + 1)
            for n, a, b, c in zip(n_games, win1, win2, ties)
        ]
    )
    if model == "davidson":
        assert nu is not None
        eta = np.stack([b1, b2, nu[:, None] + 0.5 * (b1 + b2)], axis=-1)
        log_p = eta - np.logaddexp.reduce(eta, axis=-1, keepdims=True)
        rep = rng.multinomial(n_games, np.exp(log_p))
        counts = np.stack([win1, win2, ties], axis=-1)
        log_lik = log_coef + np.sum(counts * log_p, axis=-1)
        return {"win1_rep": rep[..., 0], "ties_rep": rep[..., 2], "log_lik": log_lik}
    eta = b1 - b2
    log_p1 = -np.logaddexp(0.0, -eta)  # log inv_logit(eta)
    log_p2 = -np.logaddexp(0.0, eta)  # log (1 - inv_logit(eta))
    win1_rep = rng.binomial(n_games, np.exp(log_p1))
    log_lik = log_coef + win1 * log_p1 + win2 * log_p2
    return {"win1_rep": win1_rep, "log_lik": log_lik}


def stan_arrays(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each list as a numpy array: the form httpstan converts fastest.

    Every call into an httpstan model (``log_prob``, ``log_prob_grad``, ``write_array``: some
    hundreds per approximation) hands it the data dict, which httpstan converts for Stan again
    each time; from numpy arrays that conversion skips building an array from each list. The
    values, and so the draws, are the same. Scalars are kept (Stan reads them as they are).
    """
    return {name: np.asarray(v) if isinstance(v, list) else v for name, v in data.items()}


def approximate(
    module: Any, model: str, data: dict[str, Any], draws: int, seed: int
) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    """Draws from the Laplace approximation: (Stan's column names, draws x columns, info).

    The columns are those a NUTS fit of the model writes for its parameters, transformed
    parameters and generated quantities (``beta.1``, ..., ``win1_rep.1``, ..., ``log_lik.1``),
    without the sampler's ``__`` columns.
    """
    data = stan_arrays(data)
    names = list(module.constrained_param_names(data))
    n_params = sum(name.split(".")[0] in PARAMETERS[model] for name in names)
    mode, iterations = find_mode(module, data, n_params)
    precision = -_Density(module, data).hessian(mode)
    try:
        factor = np.linalg.cholesky(precision)
    except np.linalg.LinAlgError:
        raise LaplaceError("the posterior is not curved at its mode (flat direction)") from None
    rng = np.random.default_rng(seed)
    # x = mode + L^-T z has covariance (L L^T)^-1 = precision^-1
    z = rng.standard_normal((draws, n_params))
    unconstrained = mode + np.linalg.solve(factor.T, z.T).T
    constrained = np.array(
        [module.write_array(data, x.tolist(), True, False) for x in unconstrained]
    )
    kept = names[: constrained.shape[1]]
    beta = constrained[:, [j for j, name in enumerate(kept) if name.startswith("beta.")]]
    nu = constrained[:, kept.index("nu")] if "nu" in kept else None
    generated = replicate(model, data, beta, nu, rng)
    columns = [constrained]
    for base in dict.fromkeys(name.split(".")[0] for name in names[len(kept) :]):
        columns.append(generated[base])  # Stan's order: each output's elements 1, 2, ...
    info = {"mode_iterations": iterations, "n_unconstrained": n_params}
    return names, np.concatenate(columns, axis=1).astype(np.float64), info
