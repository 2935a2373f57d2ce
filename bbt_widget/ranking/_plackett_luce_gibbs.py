"""The Plackett-Luce posterior sampled by Gibbs with latent variables (numpy, no Stan), the
default sampler of :func:`bbt_widget.ranking_model`.

The model (written in Stan in ``tests/oracles/plackett_luce.stan``, the tests' oracle):
weights ``theta`` on the simplex with a Dirichlet(alpha) prior, and a log-likelihood that is
a weighted sum over the sets of algorithms still to be placed,

    sum_i placed_i log theta_i - sum_s w_s log(sum_{i in s} theta_i).

Caron and Doucet ("Efficient Bayesian inference for generalized Bradley-Terry models",
J. Comput. Graph. Stat. 21(1), 2012, doi:10.1080/10618600.2012.638220, Sec. 4) sample it with
unnormalised weights ``lam_i ~ Gamma(alpha_i, 1)``, so that ``theta = lam / sum(lam)`` has
the Dirichlet prior, and one latent variable per set: since
``integral z^(w-1) exp(-z u) dz = Gamma(w) u^-w`` for any ``w > 0``, the term ``u_s^-w_s``
(``u_s`` the set's total weight) is the margin of ``z_s ~ Gamma(w_s, rate u_s)``, and the
fractional weights of split ties are no exception. Both conditionals are then Gamma:

* ``z_s | lam ~ Gamma(w_s, rate sum_{i in s} lam_i)``;
* ``lam_i | z ~ Gamma(alpha_i + placed_i, rate 1 + sum_{s containing i} z_s)``.

The likelihood does not see the scale of ``lam`` (``placed`` and ``w`` have the same total),
so the scale's posterior is its prior, ``Gamma(sum(alpha), 1)``, independent of ``theta``:
after each sweep the scale is drawn afresh from it, which keeps the scale from slowing the
chain down. The chains run side by side as rows of the same arrays: one sweep is two
(chains x sets) x (sets x algorithms) products and the Gamma draws.

Why not NUTS: the Stan program gives the same posterior (the tests compare them), but needs a
compiled model, and on the shipped 16 x 132 results ``ranking_model`` took about four times
the CPU with it for fewer effective draws per CPU second (``benchmarks/results/pl_sampler.json``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.draws import Draws
from ..core.run_context import QUIET, RunContext

#: Sweeps between two progress calls.
_PROGRESS_EVERY = 50


def sample(
    data: Mapping[str, Any],
    *,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    seed: int,
    context: RunContext = QUIET,
) -> Draws:
    """Draws of ``theta`` from the Plackett-Luce posterior of ``data`` (the Stan program's
    data, :func:`bbt_widget.ranking._plackett_luce.pl_data`).

    Each chain starts from a draw of the prior, runs ``iter_warmup`` sweeps that are dropped
    and keeps the next ``iter_sampling``. the context's progress is told ``("sampling", f)`` as the
    sweeps go, f from 0 to 1.

    Returns
    -------
    Draws
        ``params["theta"]`` shaped (chains, iter_sampling, algorithms); no sampler outputs
        (the draws are judged by R-hat and ESS); ``engine`` ``"numpy"``.
    """
    start = time.perf_counter()
    sets = np.asarray(data["sets"], dtype=float).reshape(int(data["n_set"]), int(data["n_alg"]))
    weight = np.asarray(data["set_weight"], dtype=float)
    alpha = np.asarray(data["alpha"], dtype=float)
    shape = alpha + np.asarray(data["placed"], dtype=float)
    scale_shape = float(alpha.sum())
    members = np.ascontiguousarray(sets.T)
    rng = np.random.default_rng(seed)
    lam = rng.standard_gamma(alpha, size=(chains, len(alpha)))
    kept = np.empty((chains, iter_sampling, len(shape)))
    total = iter_warmup + iter_sampling
    for sweep in range(total):
        z = rng.standard_gamma(weight, size=(chains, len(weight))) / (lam @ members)
        lam = rng.standard_gamma(shape, size=lam.shape) / (1.0 + z @ sets)
        theta = lam / lam.sum(axis=1, keepdims=True)
        lam = theta * rng.standard_gamma(scale_shape, size=(chains, 1))
        if sweep >= iter_warmup:
            kept[:, sweep - iter_warmup] = theta
        if (sweep + 1) % _PROGRESS_EVERY == 0:
            context.report("sampling", (sweep + 1) / total)
    context.report("sampling", 1.0)
    return Draws(
        params={"theta": kept},
        sampler={},
        engine="numpy",
        timings={"compile": 0.0, "sample": time.perf_counter() - start},
        info={
            "sampler": "Gibbs with latent Gamma variables (Caron and Doucet 2012)",
            "seed": seed,
        },
    )
