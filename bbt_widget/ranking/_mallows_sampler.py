"""The Mallows model with Kendall's distance: its partition function, exact marginals, the
repeated insertion sampler and the Metropolis-Hastings sampler of its posterior (numpy only),
and the size guard of a fit (:func:`check_mallows_size`).

Model (Rojas-Delgado, Ceberio, Calvo and Lozano, "Bayesian Performance Analysis for
Algorithm Ranking Comparison", IEEE Transactions on Evolutionary Computation 26(6), 2022,
doi:10.1109/TEVC.2022.3208110, Eq. 6-8 and 14-15)::

    P(pi | rho, beta) = exp(-beta d(pi, rho)) / psi_n(beta),
    psi_n(beta) = prod_{j=1}^{n} (1 - exp(-j beta)) / (1 - exp(-beta)),
    rho ~ uniform over the n! rankings,
    beta ~ exponential(rate) truncated to (0, beta_max].

``d`` is Kendall's distance (the number of discordant pairs). Vitelli et al. write the same
model with ``exp(-alpha d / n)``: their alpha is ``n * beta``.

Sampler: the Metropolis-Hastings algorithm of Vitelli, Sørensen, Crispino, Frigessi and
Arjas, "Probabilistic Preference Learning with the Mallows Rank Model", Journal of Machine
Learning Research 18(158):1-49, 2018 (https://jmlr.org/papers/v18/15-481.html), Sec. 2.4
and 4.1. Each iteration, in every chain at once (arrays with a leading chain axis):

1. ``rho``: a leap-and-shift proposal. An algorithm u is drawn uniformly; its consensus rank
   r moves to r' drawn uniformly from the ranks within ``leap`` of r (r excluded), and the
   algorithms ranked between r and r' shift by one towards r. Accepted with probability
   ``min(1, exp(-beta * (D' - D)) * P_L(rho | rho') / P_L(rho' | rho))``, where D is the total
   Kendall distance of the data to the consensus and P_L the proposal probability (Vitelli
   et al., Sec. 2.4: the two differ only when |r' - r| > 1, by l(r) / l(r') with l(r) the
   number of ranks within ``leap`` of r). Only the pairs (u, v) with v in the moved block
   change order, so ``D' - D`` is a sum over that block of the pairwise counts ``W``
   (``W[i, j]`` = weight of the data ranking i before j), never a full recount.
2. ``beta``: a log-normal random walk, ``beta' = beta * exp(step * N(0, 1))``, accepted with
   the posterior ratio times the Jacobian ``beta' / beta``; ``step`` is tuned in burn-in
   towards an acceptance rate of 0.3, then fixed.
3. Missing results (data augmentation, Vitelli et al. Sec. 4.1): a data set where an
   algorithm has no result ranks the others only. Its full ranking is latent: each missing
   algorithm is taken out of the current latent ranking and put back at one of the n
   places, drawn from its exact conditional ``prop. to exp(-beta * d(latent, rho))`` (a Gibbs
   step: the ranks of the algorithms with results keep their order). Once every ``thin``
   iterations, every latent ranking moves one of its missing algorithms, drawn uniformly (a
   random-scan Gibbs step: each costs more than a step of rho). The posterior of
   (rho, beta) is then the one of the observed partial rankings, each a marginal of the
   model (missing at random).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.run_context import QUIET, RunContext
from ..core.sizing import check_job_size

#: The size guard's estimate of a fit (:func:`check_mallows_size`), measured on a 2-core
#: machine. Memory of the process besides the fit (Python, numpy, pandas, ArviZ imported).
_BASE = 200 * 2**20
#: Bytes per kept draw and squared algorithm count at the peak, the summaries'
#: (draw, algorithm, place) arrays and their temporaries (measured: 33-35 bytes at 100-200
#: algorithms, 43 at 50 where the base weighs more).
_MALLOWS_BYTES = 34
#: Seconds of the summaries per kept draw and cubed algorithm count (the exact place
#: probabilities insert each algorithm in turn: measured 1.6-2.7e-8 at 50-200 algorithms).
_MALLOWS_SUMMARY_SECONDS = 2e-8
#: Seconds of a sampler iteration (all chains at once), fixed part and per algorithm
#: (measured: 75 us at 50-100 algorithms, 100-175 us at 200).
_MALLOWS_STEP_SECONDS = (6e-5, 4e-7)

__all__ = [
    "MallowsChains",
    "before_probability",
    "kendall_distance",
    "log_partition",
    "position_probabilities",
    "run_chains",
    "sample_rankings",
]

#: Target acceptance rate of the beta random walk while it is tuned in burn-in.
BETA_ACCEPT_TARGET = 0.3
#: Iterations between progress reports and cancellation checks (and per block of random
#: numbers drawn at once).
REPORT_EVERY = 500


def log_partition(beta: np.ndarray | float, n: int) -> np.ndarray:
    """``log psi_n(beta)`` of Rojas-Delgado et al.'s Eq. 8 for each beta > 0 (exact, stable)."""
    b = np.asarray(beta, dtype=float)
    j = np.arange(1.0, n + 1.0)
    return np.asarray(
        np.sum(np.log(-np.expm1(-j * b[..., None])), axis=-1) - n * np.log(-np.expm1(-b))
    )


def kendall_distance(ranks_a: np.ndarray, ranks_b: np.ndarray) -> np.ndarray:
    """Kendall's distance between rankings given as ranks (``ranks[..., i]`` = the rank of
    item i), over the last axis; leading axes broadcast."""
    da = np.sign(ranks_a[..., :, None] - ranks_a[..., None, :])
    db = np.sign(ranks_b[..., :, None] - ranks_b[..., None, :])
    return np.asarray(np.sum(da * db < 0, axis=(-2, -1)) // 2)


def sample_rankings(
    consensus: np.ndarray, beta: np.ndarray, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Rankings drawn from Mallows(consensus, beta) by repeated insertion (exact).

    ``consensus`` holds ranks 0..n-1 per item, shape (..., n); ``beta`` matches its leading
    shape. Returns ranks (0 = first), shape (..., size, n). The items are inserted in the
    consensus order; the k-th one (k = 0, 1, ...) goes before V of the k already placed, with
    P(V = v) proportional to exp(-beta v), v = 0..k: the Kendall distance is the sum of the V.
    """
    consensus = np.asarray(consensus)
    n = consensus.shape[-1]
    lead = consensus.shape[:-1]
    b = np.maximum(np.asarray(beta, dtype=float), 1e-12)[..., None]
    pos = np.zeros((*lead, size, n), dtype=np.int64)  # by consensus rank
    for k in range(n):
        u = rng.random((*lead, size))
        top = -np.expm1(-(k + 1) * b)  # 1 - q^(k+1), q = exp(-beta)
        # inverse CDF of the truncated geometric: P(V <= v) = (1 - q^(v+1)) / (1 - q^(k+1))
        v = np.floor(np.log1p(-u * top) / -b).astype(np.int64)
        v = np.clip(v, 0, k)
        place = (k - v)[..., None]
        shift = (pos[..., :k] >= place).astype(np.int64)
        pos[..., :k] += shift
        pos[..., k] = place[..., 0]
    # back from consensus rank to item: item i sits where consensus rank consensus[i] went
    idx = np.broadcast_to(consensus[..., None, :], pos.shape)
    return np.take_along_axis(pos, idx, axis=-1)


def position_probabilities(beta: np.ndarray, n: int) -> np.ndarray:
    """P(the item of consensus rank a is at position x) under Mallows-Kendall, exactly.

    Shape (len(beta), n, n) indexed [draw, a, x] (0 = first). Follows the repeated
    insertion of :func:`sample_rankings`: after its own insertion the item moves one place
    down each time a later item k is inserted at or above it, with probability
    ``(q^(k-x) - q^(k+1)) / (1 - q^(k+1))`` from place x (q = exp(-beta)).
    """
    b = np.maximum(np.asarray(beta, dtype=float).ravel(), 1e-12)[:, None]
    q = np.exp(-b)
    dist = np.zeros((b.shape[0], n, n))
    x = np.arange(n)
    for k in range(n):
        # insert item k: P(place x) = q^(k-x) / sum_{v<=k} q^v for x = 0..k
        w = np.where(x <= k, q ** np.clip(k - x, 0, None), 0.0)
        dist[:, k, :] = w / w.sum(axis=1, keepdims=True)
        if k == 0:
            continue
        # the items inserted before k move down when k goes at or above them
        # q^(k-x) - q^(k+1) = q^(k-x) (1 - q^(x+1)), with expm1 for beta near 0
        gain = q ** np.clip(k - x, 0, None) * -np.expm1(-(x + 1) * b)
        s = np.where(x < k, gain / -np.expm1(-(k + 1) * b), 0.0)
        old = dist[:, :k, :]
        moved = old * s[:, None, :]
        new = old - moved
        new[:, :, 1:] += moved[:, :, :-1]
        dist[:, :k, :] = new
    return dist


def before_probability(beta: np.ndarray | float, gap: np.ndarray) -> np.ndarray:
    """P(an item comes before one ``gap`` consensus ranks below it), Mallows-Kendall.

    ``(g + 1) / (1 - q^(g+1)) - g / (1 - q^g)`` with q = exp(-beta), g = gap >= 1 (1 / (1 + q)
    for neighbours), computed as ``sum_{j=1..g} j q^(j-1) / (S_g S_(g+1))`` with
    ``S_m = sum_{j<m} q^j``: sums of positive terms, exact also where the two fractions above
    are huge and nearly equal (beta near 0). ``beta`` and ``gap`` broadcast.
    """
    b, g = np.broadcast_arrays(np.asarray(beta, dtype=float), np.asarray(gap, dtype=np.int64))
    j = np.arange(int(g.max()) + 1)  # 0..max gap
    powers = np.exp(-j * b[..., None])  # q^j
    within = j <= g[..., None]
    s_g = np.sum(powers * (j < g[..., None]), axis=-1)
    s_g1 = np.sum(powers * within, axis=-1)
    weighted = np.sum((j + 1) * powers * (j < g[..., None]), axis=-1)  # sum_{j=1..g} j q^(j-1)
    return np.asarray(weighted / (s_g * s_g1))


@dataclass
class MallowsChains:
    """Draws of :func:`run_chains`: ``rank`` (chains, draws, n) consensus ranks (0 = first)
    per item, ``beta`` (chains, draws); acceptance rates of the two proposals, per chain."""

    rank: np.ndarray
    beta: np.ndarray
    accept_rho: np.ndarray
    accept_beta: np.ndarray
    beta_step: np.ndarray


def run_chains(
    pairs: np.ndarray,
    partial: np.ndarray,
    *,
    n_rankings: int,
    rate: float,
    beta_max: float,
    chains: int,
    burn_in: int,
    draws: int,
    thin: int,
    leap: int,
    rng: np.random.Generator,
    context: RunContext = QUIET,
) -> MallowsChains:
    """Sample the posterior of (rho, beta) with the steps of the module documentation.

    Parameters
    ----------
    pairs
        (n, n): ``pairs[i, j]`` = weight of the data ranking i before j, over the pairs of
        algorithms that both have a result (a split tie adds 1/2 each way).
    partial
        (rankings with a missing result, n): the scores of those data sets, higher is
        better, NaN where the algorithm has no result (its pairs with every other algorithm
        are latent).
    n_rankings
        Number of rankings (data sets): the power of the partition function.
    rate, beta_max
        Truncated exponential prior on beta.
    chains, burn_in, draws, thin, leap
        ``burn_in * thin`` iterations discarded, then ``draws * thin`` of which every
        ``thin``-th is kept; ``leap``: the leap-and-shift reach.
    context
        Its progress is told every :data:`REPORT_EVERY` iterations, and its cancel
        checked: :class:`FitCancelled` when set.
    """
    n = pairs.shape[0]
    c_idx = np.arange(chains)
    # overdispersed starts: random consensus rankings, beta spread over a wide range
    rank = np.array([rng.permutation(n) for _ in range(chains)])
    beta = np.exp(rng.uniform(np.log(0.01), np.log(2.0), size=chains))
    step = np.full(chains, 0.5)
    latent = _LatentRankings(partial, chains, rng) if len(partial) else None
    W = np.broadcast_to(pairs, (chains, n, n)) + (latent.pair_counts() if latent else 0.0)
    D = _total_distance(W, rank)
    A = W - np.swapaxes(W, 1, 2)  # A[c, u, v]: weight of u before v minus v before u
    logz = log_partition(beta, n)
    places = np.arange(n)
    below_of = np.minimum(places, leap)  # ranks a leap can reach above / below each rank
    reach_of = below_of + np.minimum(n - 1 - places, leap)
    total = (burn_in + draws) * thin
    warm = burn_in * thin
    out_rank = np.empty((chains, draws, n), dtype=np.int16)
    out_beta = np.empty((chains, draws))
    acc_rho = np.zeros(chains)
    acc_beta = np.zeros(chains)
    window_acc = np.zeros(chains)
    for first in range(0, total, REPORT_EVERY):
        size = min(REPORT_EVERY, total - first)
        # the random numbers of this block at once (a generator call costs more than a step)
        pick = rng.integers(0, n, size=(size, chains))
        jump = rng.random((size, chains))
        log_u_rho = np.log(rng.random((size, chains)))
        walk = rng.standard_normal((size, chains))
        log_u_beta = np.log(rng.random((size, chains)))
        for t in range(size):
            it = first + t
            # 1. leap-and-shift on rho
            u = pick[t]
            r = rank[c_idx, u]
            reach = reach_of[r]
            r_new = r - below_of[r] + (jump[t] * reach).astype(np.int64)
            r_new += r_new >= r
            up = r_new < r  # u moves up: the ranks in between move down one place
            lo, hi = np.where(up, r_new, r), np.where(up, r, r_new)
            block = (rank >= lo[:, None]) & (rank <= hi[:, None])
            block[c_idx, u] = False
            sign = np.where(up, -1.0, 1.0)
            delta = sign * np.sum(block * A[c_idx, u], axis=1)
            log_q = np.where(hi - lo > 1, np.log(reach / reach_of[r_new]), 0.0)
            ok = log_u_rho[t] < -beta * delta + log_q
            rank += (ok[:, None] & block) * np.where(up, 1, -1)[:, None]
            rank[c_idx, u] = np.where(ok, r_new, r)
            D += ok * delta
            # 2. log-normal random walk on beta
            prop = beta * np.exp(step * walk[t])
            logz_prop = log_partition(prop, n)
            log_ratio = (
                -(prop - beta) * (D + rate) - n_rankings * (logz_prop - logz) + np.log(prop / beta)
            )
            ok_b = (prop <= beta_max) & (log_u_beta[t] < log_ratio)
            beta = np.where(ok_b, prop, beta)
            logz = np.where(ok_b, logz_prop, logz)
            # 3. the latent places of missing results, a Gibbs step once per kept draw
            if latent is not None and (it + 1) % thin == 0:
                latent.update(rank, beta)
                W = pairs[None] + latent.pair_counts()
                A = W - np.swapaxes(W, 1, 2)
                D = _total_distance(W, rank)
            if it < warm:
                window_acc += ok_b
                if (it + 1) % 50 == 0:  # tune the beta step towards the target acceptance
                    step *= np.exp((window_acc / 50 - BETA_ACCEPT_TARGET) * 2)
                    window_acc[:] = 0
            else:
                acc_rho += ok
                acc_beta += ok_b
                if (it - warm + 1) % thin == 0:
                    out_rank[:, (it - warm) // thin] = rank
                    out_beta[:, (it - warm) // thin] = beta
        context.check("the Mallows sampler was cancelled")
        context.report("sampling", (first + size) / total)
    kept = max(draws * thin, 1)
    return MallowsChains(out_rank, out_beta, acc_rho / kept, acc_beta / kept, step)


def _total_distance(W: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Per chain, the total Kendall distance: weight of every pair the data order against
    the consensus (``W[c, j, i]`` summed over the pairs with i ranked above j)."""
    above = rank[:, :, None] < rank[:, None, :]  # [c, i, j]: i above j in the consensus
    return np.asarray(np.sum(np.where(above, np.swapaxes(W, 1, 2), 0.0), axis=(1, 2)))


class _LatentRankings:
    """The full rankings of the data sets with missing results, per chain (Vitelli et al.
    2018, Sec. 4.1): the places of the missing algorithms are latent; the algorithms with a
    result keep the order of the data (ties: in a fixed order, their pair counted 1/2 each way
    in ``pairs``, not here)."""

    def __init__(self, partial: np.ndarray, chains: int, rng: np.random.Generator) -> None:
        missing = ~np.isfinite(partial)
        self.rng = rng
        k, n = missing.shape
        # the algorithms with a result in the order of the data (a missing one can only go
        # between them: a > b observed leaves m above both, between them or below both),
        # ties in a fixed order; each missing algorithm at a random place
        self.place = np.empty((chains, k, n), dtype=np.int64)  # [c, k, item] -> place
        for c in range(chains):
            for row in range(k):
                seen = np.flatnonzero(~missing[row])
                perm = list(seen[np.argsort(-partial[row, seen], kind="stable")])
                for m in np.flatnonzero(missing[row]):
                    perm.insert(int(rng.integers(0, len(perm) + 1)), int(m))
                self.place[c, row, perm] = np.arange(n)
        # a pair counts in the latent part when at least one of the two is missing
        self.latent_pair = missing[:, :, None] | missing[:, None, :]
        np.einsum("kii->ki", self.latent_pair)[:] = False
        # the j-th missing algorithm of each row (-1: none) and how many a row has
        self.counts = missing.sum(axis=1)
        self.slots = np.full((k, int(self.counts.max())), -1)
        for row in range(k):
            absent = np.flatnonzero(missing[row])
            self.slots[row, : len(absent)] = absent

    def pair_counts(self) -> np.ndarray:
        """(chains, n, n): per chain, the number of latent rankings with i before j, over
        the pairs that involve a missing algorithm."""
        before = self.place[:, :, :, None] < self.place[:, :, None, :]
        return np.asarray(np.sum(before & self.latent_pair[None], axis=1), dtype=float)

    def update(self, rank: np.ndarray, beta: np.ndarray) -> None:
        """A Gibbs step (random scan): in every chain and latent ranking, one of its missing
        algorithms, drawn uniformly, gets a new place from its exact conditional."""
        chains, k, n = self.place.shape
        cc, kk = np.arange(chains)[:, None], np.arange(k)[None, :]
        pick = (self.rng.random((chains, k)) * self.counts).astype(np.int64)
        m = self.slots[kk, pick]  # (c, k): the algorithm moved
        own = self.place[cc, kk, m]
        others = self.place - (self.place > own[:, :, None])  # the rest at places 0..n-2
        # disagree[x]: with m inserted at place x, the pairs (m, v) that disagree with the
        # consensus. The others fill places 0..n-2, one each: m lands below those at places
        # < x (a disagreement where the consensus puts m above) and above the rest (a
        # disagreement where it puts m below): two running sums over the places.
        m_above = rank[:, None, :] > rank[cc, m][:, :, None]  # [c, k, v]: m above v
        slot_of = np.where(np.arange(n) == m[:, :, None], n - 1, others)  # m: a spare slot
        flag = np.zeros(others.shape)  # by place: 1 where the consensus puts m above
        flag[cc[:, :, None], kk[:, :, None], slot_of] = m_above
        flag[:, :, n - 1] = 0.0
        above_before = np.cumsum(flag, axis=2) - flag  # sum over the places < x
        below_after = (n - 1 - np.arange(n)) - (above_before[:, :, -1:] - above_before)
        disagree = above_before + below_after
        # draw the place from exp(-beta disagree) by its inverse CDF
        weight = np.exp(-beta[:, None, None] * (disagree - disagree.min(axis=2, keepdims=True)))
        cdf = np.cumsum(weight, axis=2)
        u = self.rng.random((chains, k, 1)) * cdf[:, :, -1:]
        x_new = np.minimum(np.sum(cdf < u, axis=2), n - 1)
        moved = others + (others >= x_new[:, :, None])
        moved[cc, kk, m] = x_new
        self.place = moved


def mallows_estimate(
    n_alg: int, chains: int, burn_in: int, draws: int, thin: int
) -> tuple[int, float]:
    """(peak bytes, seconds) of ``mallows`` on ``n_alg`` algorithms.

    ``burn_in`` and ``draws`` per chain, ``thin`` iterations per kept draw, as the model's
    arguments.
    """
    kept = chains * draws
    need = _BASE + _MALLOWS_BYTES * kept * n_alg**2
    fixed, per_alg = _MALLOWS_STEP_SECONDS
    sampler = (burn_in + draws) * thin * (fixed + per_alg * n_alg)
    return int(need), sampler + _MALLOWS_SUMMARY_SECONDS * kept * n_alg**3


def check_mallows_size(
    n_alg: int,
    chains: int,
    burn_in: int,
    draws: int,
    thin: int,
    *,
    available: int | None = None,
    stacklevel: int = 3,
) -> None:
    """Refuse a Mallows fit whose summaries would not fit in memory; warn before one that
    will take minutes (:class:`~bbt_widget.core.sizing.LongRunWarning`). Arguments as for
    :func:`mallows_estimate`; ``available`` bytes (default: the machine's); ``stacklevel`` as
    for ``warnings.warn`` called where this is called.

    Raises
    ------
    bbt_widget.core.sizing.FitTooLargeError
        The estimate exceeds 90% of the available memory; the message names the options.
    """
    need, seconds = mallows_estimate(n_alg, chains, burn_in, draws, thin)
    check_job_size(
        need,
        seconds,
        f"the Mallows model of {n_alg} algorithms ({chains} chains x {draws} draws)",
        "its memory grows with draws x algorithms^2 and its time with draws x "
        "algorithms^3: use fewer draws (iter_sampling) or chains, or rank fewer algorithms "
        "(pass only their results, e.g. the strongest ones)",
        available=available,
        stacklevel=stacklevel + 1,
    )
