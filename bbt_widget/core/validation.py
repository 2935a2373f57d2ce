"""Validation of user input: option values, win tables and the value helpers of messages.

Every check on an option or a ready win table lives here, at the boundary, so that a mistake is
reported with the value to fix instead of surfacing as a traceback from pandas or Stan. The
layouts of results are parsed (and their own shape checked) in :mod:`bbt_widget.data`; the
allowed values come from :mod:`bbt_widget.options`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from .options import (
    DEFAULT_ADAPT_DELTA,
    DEFAULT_ITER_SAMPLING,
    DEFAULT_MAX_TREEDEPTH,
    DEFAULT_SEED,
    HYPERPRIOR_ALIASES,
    HYPERPRIOR_FAMILIES,
    HYPERPRIOR_SCALES,
    HYPERPRIORS,
    INTERPRETATIONS,
    MIN_ITER_SAMPLING,
    PRIOR_SCALE_RANGE,
    TIE_POLICIES,
    HyperpriorFamily,
    Rule,
    TiePolicy,
)

__all__ = [
    "DEFAULT_SEED",
    "MAX_COUNT",
    "WIN_TABLE_COLUMNS",
    "check_adapt_delta",
    "check_algorithms",
    "check_count",
    "check_d_min",
    "check_flag",
    "check_group_column",
    "check_hdi",
    "check_hyperprior",
    "check_interpretation",
    "check_iter_sampling",
    "check_max_treedepth",
    "check_prior_scale",
    "check_rope",
    "check_sampler_counts",
    "check_seed",
    "check_tie_threshold",
    "check_ties",
    "check_win_table",
    "is_win_table",
]

WIN_TABLE_COLUMNS = ("alg1", "alg2", "win1", "win2", "ties")
#: Largest count a pair may have: Stan's integers are 32-bit.
MAX_COUNT = 2**31 - 1


def check_ties(ties: str | None) -> TiePolicy | None:
    """Validate a tie policy; ``None`` means raw counts."""
    if ties is None or ties in TIE_POLICIES:
        return ties
    raise ValueError(
        f"unknown tie policy {ties!r}; use one of {', '.join(map(repr, TIE_POLICIES))} or None"
    )


def check_flag(value: bool, name: str) -> bool:
    """Validate a yes/no setting: ``True`` or ``False`` only (numpy's too), so that a string
    such as ``"no"`` or ``"False"``, true as Python reads it, is refused rather than taken as
    yes."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_d_min(d_min: float | None) -> float | None:
    """Validate the local-ROPE threshold (``None`` compares means)."""
    if d_min is None:
        return None
    if isinstance(d_min, bool) or not isinstance(d_min, (int, float, np.number)):
        raise TypeError(f"d_min must be a number or None, got {d_min!r}")
    if not np.isfinite(d_min) or d_min < 0:
        raise ValueError(
            f"d_min must be a finite number >= 0 (e.g. 0.4, the paper's choice), got {d_min}"
        )
    return float(d_min)


def check_tie_threshold(tie_threshold: float | None, name: str = "tie_threshold") -> float | None:
    """Validate the tie threshold in score units (``None`` or 0: no threshold).

    ``name`` is what the message calls the argument (e.g. ``"--tie-threshold"``).
    """
    if tie_threshold is None:
        return None
    if isinstance(tie_threshold, bool) or not isinstance(tie_threshold, (int, float, np.number)):
        raise TypeError(
            f"{name} must be a number in score units or None, e.g. 0.005 for half a "
            f"percentage point of accuracy; got {tie_threshold!r}"
        )
    if not np.isfinite(tie_threshold) or tie_threshold < 0:
        raise ValueError(
            f"{name} must be a finite number >= 0 in score units (e.g. 0.005; 0 or None for "
            f"no threshold), got {tie_threshold}"
        )
    return float(tie_threshold)


def check_rope(rope: Sequence[float]) -> tuple[float, float]:
    """Validate ROPE bounds on the probability scale: ``0 <= low < high <= 1``."""
    try:
        low, high = (float(v) for v in rope)
    except (TypeError, ValueError):
        raise ValueError(
            f"rope must be two numbers (low, high), e.g. (0.45, 0.55); got {rope!r}"
        ) from None
    if not (0.0 <= low <= 1.0 and 0.0 <= high <= 1.0):
        raise ValueError(f"rope bounds are probabilities and must lie in [0, 1]; got {rope!r}")
    if low >= high:
        raise ValueError(f"rope low must be below rope high; got low={low}, high={high}")
    return low, high


def check_hdi(hdi: float) -> float:
    """Validate an HDI probability mass in (0, 1)."""
    if isinstance(hdi, bool) or not isinstance(hdi, (int, float, np.number)):
        raise TypeError(f"hdi must be a number in (0, 1), e.g. 0.89; got {hdi!r}")
    if not 0.0 < hdi < 1.0:
        raise ValueError(f"hdi mass must lie strictly between 0 and 1 (e.g. 0.89); got {hdi}")
    return float(hdi)


def check_count(value: int, name: str, least: int = 1) -> int:
    """Validate an integer >= ``least`` (chains, iterations, samples)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


def check_sampler_counts(values: dict[str, Any], *, as_options: bool = False) -> None:
    """Validate the ``chains``, ``iter_warmup`` and ``iter_sampling`` among ``values`` that
    are set (``None``: the engine's default); ``as_options`` names them as the command's
    options (``--iter-sampling``).

    Raises
    ------
    ValueError
        From :func:`check_count` and :func:`check_iter_sampling`.
    """
    for key in ("chains", "iter_warmup", "iter_sampling"):
        value = values.get(key)
        if value is None:
            continue
        name = "--" + key.replace("_", "-") if as_options else key
        if key == "iter_sampling":
            check_iter_sampling(value, name)
        else:
            check_count(value, name)


def check_seed(seed: int | None) -> int:
    """Validate a seed; ``None`` draws a fresh one (recorded, so the result can be rerun)."""
    if seed is None:
        # a SeedSequence made without entropy draws its own as one int
        return int(cast(int, np.random.SeedSequence().entropy) % (2**31 - 1))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**31:
        raise ValueError(f"seed must be an integer in [0, 2**31) or None, got {seed!r}")
    return int(seed)


def check_adapt_delta(adapt_delta: float) -> float:
    """Validate NUTS's target acceptance rate, strictly between 0 and 1."""
    if isinstance(adapt_delta, bool) or not isinstance(adapt_delta, (int, float, np.number)):
        raise TypeError(f"adapt_delta must be a number in (0, 1), e.g. 0.95; got {adapt_delta!r}")
    if not 0.0 < adapt_delta < 1.0:
        raise ValueError(
            f"adapt_delta must lie strictly between 0 and 1 (default {DEFAULT_ADAPT_DELTA}; "
            f"raise it, e.g. to 0.95, against divergent transitions); got {adapt_delta}"
        )
    return float(adapt_delta)


def check_max_treedepth(max_treedepth: int) -> int:
    """Validate NUTS's maximum tree depth, an integer from 1 to 30."""
    if (
        isinstance(max_treedepth, bool)
        or not isinstance(max_treedepth, (int, np.integer))
        or not 1 <= max_treedepth <= 30
    ):
        # Stan doubles the trajectory per level: past ~15 a single transition takes minutes.
        raise ValueError(
            f"max_treedepth must be an integer from 1 to 30 (default {DEFAULT_MAX_TREEDEPTH}; "
            f"raise it, e.g. to 12, when transitions hit it); got {max_treedepth!r}"
        )
    return int(max_treedepth)


def check_hyperprior(
    hyperprior: str, prior_scale: float | None = None
) -> tuple[HyperpriorFamily, float]:
    """Validate the hyper-prior on sigma and its scale.

    ``prior_scale=None`` means the family's default scale (paper Appendix A: lognormal 0.5,
    half-Cauchy 1.0, half-normal 3.0; :data:`bbt_widget.core.options.HYPERPRIOR_SCALES`).
    """
    spelled = HYPERPRIOR_ALIASES.get(str(hyperprior).lower(), str(hyperprior).lower())
    if spelled not in HYPERPRIORS:
        choices = ", ".join(f"{k!r} ({v.label})" for k, v in HYPERPRIOR_FAMILIES.items())
        raise ValueError(f"unknown hyperprior {hyperprior!r}; use one of {choices}")
    name = cast("HyperpriorFamily", spelled)
    if prior_scale is None:
        return name, HYPERPRIOR_SCALES[name]
    return name, check_prior_scale(prior_scale, name)


def check_prior_scale(
    prior_scale: float, family: str = "lognormal", name: str = "prior_scale"
) -> float:
    """Validate a hyper-prior scale: a number within
    :data:`~bbt_widget.core.options.PRIOR_SCALE_RANGE` (``family`` names the default in the
    message, ``name`` the argument, e.g. ``"--prior-scale"``).

    Outside that range the samplers' arithmetic breaks down (minutes of sampling, NaN draws)
    rather than the model saying anything new, so it is refused before any work.

    Raises
    ------
    TypeError
        Not a number.
    ValueError
        Not finite, or outside the range; the message gives the range and the default.
    """
    default = HYPERPRIOR_SCALES.get(family, HYPERPRIOR_SCALES["lognormal"])
    if isinstance(prior_scale, bool) or not isinstance(prior_scale, (int, float, np.number)):
        raise TypeError(
            f"{name} must be a positive number or None (the family's default), got {prior_scale!r}"
        )
    low, high = PRIOR_SCALE_RANGE
    if not (np.isfinite(prior_scale) and low <= prior_scale <= high):
        raise ValueError(
            f"{name} must be a number from {low:g} to {high:g} (e.g. {default:g}, the default "
            f"for {family}); got {_plain(prior_scale)!r}: outside that range the sampler's "
            "arithmetic breaks down (minutes of sampling, NaN draws) while the prior says "
            "nothing that a scale at the bound does not"
        )
    return float(prior_scale)


def check_iter_sampling(value: int, name: str = "iter_sampling") -> int:
    """Validate the kept iterations per chain: an integer >=
    :data:`~bbt_widget.core.options.MIN_ITER_SAMPLING` (``name`` as the message calls it).

    Raises
    ------
    ValueError
        Naming the minimum and why: with fewer draws per chain the convergence diagnostics
        (split R-hat, effective sample size) cannot be computed and no claim can be made.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= {MIN_ITER_SAMPLING}, got {value!r}")
    if value < MIN_ITER_SAMPLING:
        raise ValueError(
            f"{name} must be at least {MIN_ITER_SAMPLING}, got {value}: the convergence "
            f"diagnostics split each chain into two halves of at least two draws, and with "
            f"fewer every one is NaN and no claim can be made (the default is "
            f"{DEFAULT_ITER_SAMPLING}; a quick look needs about 100)"
        )
    return int(value)


def check_algorithms(names: Iterable[str], algorithms: Sequence[str], role: str) -> list[str]:
    """Check that every name is one of the algorithms."""
    names = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in names if n not in algorithms]
    if unknown:
        raise ValueError(
            f"{role}: {unknown[0]!r} is not an algorithm of these results; "
            f"choose from {_preview(algorithms, 20)}"
        )
    return names


def check_group_column(group: object, **layout: str | None) -> None:
    """Refuse a ``group=`` column that is also a column of the layout (``dataset=``,
    ``algorithm=``, ``fold=``, ``score=``, given as keywords).

    The group column is taken out of the results before they are read, so without this
    check the mistake surfaced as the layout's column missing ("dataset='db' is not a
    column").

    Raises
    ------
    ValueError
        Naming the column, its role and what the group column is.
    """
    if not isinstance(group, str):
        return  # a mapping data set -> group, or checked elsewhere
    for role, column in layout.items():
        if column is not None and column == group:
            what = "data-set" if role == "dataset" else role
            raise ValueError(
                f"group={group!r} is the {what} column ({role}={column!r}), and the group "
                f"column cannot be the {what} column: give the column holding each data set's "
                "family (e.g. group='family'), or a dict data set -> group"
            )


def is_win_table(data: object) -> bool:
    """Whether ``data`` looks like a ready win table (``alg1, alg2, win1, win2``)."""
    return isinstance(data, pd.DataFrame) and {"alg1", "alg2", "win1", "win2"} <= set(
        map(str, data.columns)
    )


def check_win_table(table: pd.DataFrame) -> pd.DataFrame:
    """Validate a ready win table and return it with a ``ties`` column and int counts."""
    # Checked on numpy arrays, column by column: every fit's counted table passes here too
    # (apply_ties), as do each d_min change of the widget and each of the influence lab's
    # leave-one-out tables, so no row-wise pandas apply over the pairs.
    columns = [str(c) for c in table.columns]
    present: dict[str, int] = {}
    for i, name in enumerate(columns):
        present.setdefault(name, i)  # two columns with one name: the first, as before
    missing = [c for c in ("alg1", "alg2", "win1", "win2") if c not in present]
    if missing:
        raise ValueError(
            f"a win table needs the columns alg1, alg2, win1, win2 (and ties); "
            f"{', '.join(map(repr, missing))} missing from {columns}"
        )
    out: dict[str, Any] = {}
    for col in ("alg1", "alg2"):
        names = table.iloc[:, present[col]]
        if names.isna().any():
            raise ValueError(f"win table column {col!r} has a missing algorithm name")
        out[col] = names.astype(str).to_numpy(dtype=object)
    for col in ("win1", "win2", "ties"):
        if col not in present:  # no ties column: none
            out[col] = np.zeros(len(table), dtype=np.int64)
            continue
        given = table.iloc[:, present[col]].reset_index(drop=True)
        what = f"win table column {col!r}"
        kind = given.dtype.kind if isinstance(given.dtype, np.dtype) else ""
        if kind == "i" or (kind == "u" and given.dtype.itemsize < 8):
            # numpy integers (counted tables): no NaN, no fractions, no overflow in int64
            vals = given.to_numpy(dtype=np.int64)
            bad = vals < 0
        else:
            vals = _numeric(given, what).to_numpy(dtype=float)
            with np.errstate(invalid="ignore"):
                bad = np.isnan(vals) | (vals < 0) | (vals != np.round(vals))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{what} must hold counts (integers >= 0); row {i} has {_plain(given.iloc[i])!r}"
            )
        # Stan's int is 32-bit, and win1 + win2 (+ ties) must fit too: check before casting
        # so the message shows the value given, not an overflowed one
        if (vals > MAX_COUNT).any():
            i = int(np.flatnonzero(vals > MAX_COUNT)[0])
            raise ValueError(
                f"{what} row {i} has {_plain(given.iloc[i])!r}, more "
                f"games than Stan can count (at most {MAX_COUNT} per pair)"
            )
        out[col] = vals.astype(np.int64)
    total = out["win1"] + out["win2"] + out["ties"]
    if (total > MAX_COUNT).any():
        i = int(np.flatnonzero(total > MAX_COUNT)[0])
        raise ValueError(
            f"win table row {i} has {int(total[i])} games in all (win1 + win2 + ties), "
            f"more than Stan can count (at most {MAX_COUNT} per pair)"
        )
    alg1, alg2 = out["alg1"], out["alg2"]
    same = alg1 == alg2
    if same.any():
        i = int(np.flatnonzero(same)[0])
        raise ValueError(
            f"win table row {i} pairs {alg1[i]!r} with itself; each row must be two different "
            "algorithms"
        )
    seen: set[tuple[str, str]] = set()
    for a, b in zip(alg1, alg2, strict=True):
        pair = (a, b) if a < b else (b, a)
        if pair in seen:
            raise ValueError(
                f"win table has the pair {pair[0]!r}-{pair[1]!r} twice; keep one row per pair"
            )
        seen.add(pair)
    if len(set(alg1) | set(alg2)) < 2:
        raise ValueError("a win table needs at least 2 algorithms")
    return pd.DataFrame(out, columns=list(WIN_TABLE_COLUMNS))


def check_interpretation(interpretation: str) -> Rule:
    """Validate a decision rule: ``"weak"`` (paper Sec. 9.2) or ``"strong"`` (Sec. 9.3)."""
    if interpretation not in INTERPRETATIONS:
        choices = " or ".join(map(repr, INTERPRETATIONS))
        raise ValueError(f"interpretation must be {choices}, got {interpretation!r}")
    return interpretation


# --------------------------------------------------------------------------- helpers


def _numeric(s: pd.Series, what: str) -> pd.Series:
    s = s.reset_index(drop=True)
    if pd.api.types.is_bool_dtype(s) or not (
        pd.api.types.is_numeric_dtype(s) or s.dtype == object or pd.api.types.is_string_dtype(s)
    ):
        raise TypeError(f"{what} must hold numbers, but has dtype {s.dtype}")
    if not pd.api.types.is_numeric_dtype(s):
        conv = pd.to_numeric(s, errors="coerce")
        bad = conv.isna() & s.notna()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise TypeError(
                f"{what} must hold numbers, but row {i} is {s.iloc[i]!r}; fix or remove "
                "that value (use NaN for a missing result)"
            )
        s = conv
    s = s.astype(float)
    if np.isinf(s).any():
        i = int(np.flatnonzero(np.isinf(s))[0])
        raise ValueError(
            f"{what} has an infinite value ({s.iloc[i]}) at row {i}; replace it by a finite "
            "score, or by NaN if the result is missing"
        )
    return s


def _plain(value: object) -> object:
    """A numpy scalar as the Python value, so messages show 1.5, not np.float64(1.5)."""
    return value.item() if isinstance(value, np.generic) else value


def _preview(values: Iterable[object], n: int = 8) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:n])
    return shown + (f", ... ({len(values)} in all)" if len(values) > n else "")
