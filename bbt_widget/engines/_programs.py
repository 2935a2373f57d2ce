"""The Stan programs: where their source lives, its hash, and the data each one reads."""

from __future__ import annotations

import hashlib
import math
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, get_args

import numpy as np

from ..core.draws import ModelName
from ..core.options import DEFAULT_HYPERPRIOR, GROUP_TAU_SCALE, HYPERPRIOR_SCALES, HYPERPRIORS

MODELS: tuple[str, ...] = get_args(ModelName)

_COUNTS = {
    "bbt": ("win1", "win2"),
    "davidson": ("win1", "win2", "ties"),
    "bbt_groups": ("win1", "win2"),
}
#: Per-pair outputs of each program (Stan writes no column for them when n_pairs is 0).
_PAIR_OUTPUTS = {
    "bbt": ("win1_rep", "log_lik"),
    "davidson": ("win1_rep", "ties_rep", "log_lik"),
    "bbt_groups": ("win1_rep", "log_lik"),
}
#: Outputs that are integers (Stan's writers send every value as a double).
INTEGER_OUTPUTS = frozenset({"win1_rep", "ties_rep", "treedepth__", "n_leapfrog__", "divergent__"})


def check_model(model: str) -> ModelName:
    """Return ``model`` if it names a Stan program, else raise ValueError."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; expected one of {', '.join(MODELS)}")
    return model  # type: ignore[return-value]


def stan_file(model: ModelName) -> Path:
    """Path of the ``.stan`` file of ``model``.

    The wheel carries the programs inside the package (``bbt_widget/stan/``, force-included by
    hatch); a source checkout or an editable install has them at ``<repo>/stan/``.
    """
    name = f"{check_model(model)}.stan"
    packaged = resources.files("bbt_widget").joinpath("stan").joinpath(name)
    if packaged.is_file():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "stan" / name
    if checkout.is_file():
        return checkout
    raise FileNotFoundError(f"{name} is neither in the package nor in {checkout.parent}")


#: ``#include name`` (Stan's form, with or without quotes) on a line of its own.
_INCLUDE = re.compile(r'^[ \t]*#include[ \t]+["<]?([^"<>\s]+)[">]?[ \t]*$', re.MULTILINE)


@cache
def _source(path: Path, mtime_ns: int) -> str:
    # Line endings are normalised so that a CRLF checkout hashes like the original.
    return path.read_text(encoding="utf-8").replace("\r\n", "\n")


def _read(path: Path) -> str:
    return _source(path, path.stat().st_mtime_ns)


def _expand(text: str, directory: Path, seen: tuple[str, ...] = ()) -> str:
    """``text`` with each ``#include`` line replaced by that file of ``directory``, recursively."""

    def insert(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in seen:
            raise ValueError(f"Stan include cycle: {' -> '.join((*seen, name))}")
        path = directory / name
        if not path.is_file():
            raise FileNotFoundError(f"Stan program includes {name}, not found in {directory}")
        return _expand(_read(path), directory, (*seen, name)).rstrip("\n")

    return _INCLUDE.sub(insert, text)


def include_dir(model: ModelName) -> Path:
    """The folder the ``#include`` lines of ``model`` are resolved in (CmdStan's include path)."""
    return stan_file(model).parent


def stan_source(model: ModelName) -> str:
    """Source text of the ``.stan`` file of ``model`` as written, ``#include`` lines and all
    (compiled by CmdStan with :func:`include_dir` as the include path)."""
    return _read(stan_file(model))


def stan_program(model: ModelName) -> str:
    """The whole Stan program of ``model``: its source with every ``#include`` expanded.

    httpstan compiles a program from one string and knows no include path, so the PyStan
    engine compiles this text; :func:`program_hash` hashes it, so that an edit to an included
    file rebuilds every cached model that uses it.
    """
    return _expand(stan_source(model), include_dir(model))


def program_hash(model: ModelName) -> str:
    """Short sha256 of the program source, includes expanded; keys every compiled-model cache."""
    return hashlib.sha256(stan_program(model).encode()).hexdigest()[:16]


def _as_int_list(name: str, values: Any, n: int) -> list[int]:
    try:
        seq = list(values)
    except TypeError:
        raise ValueError(f"data[{name!r}] must be a sequence of {n} integers") from None
    if len(seq) != n:
        raise ValueError(f"data[{name!r}] has {len(seq)} entries, expected n_pairs = {n}")
    out = []
    for v in seq:
        try:
            out.append(int(operator.index(v)))  # ints and numpy integers
            continue
        except TypeError:
            pass
        try:
            f = float(v)  # integral floats, e.g. counts from a float column
        except (TypeError, ValueError):
            f = math.nan
        if not f.is_integer():
            raise ValueError(f"data[{name!r}] must hold integers, got {v!r}")
        out.append(int(f))
    return out


def prepare_data(model: ModelName, data: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the Stan data of ``model`` and convert it to plain Python ints and floats.

    ``hyperprior`` (1 lognormal, 2 half-Cauchy, 3 half-normal; or those names) defaults to 1 and
    ``prior_scale`` to that family's default (``bbt_widget.core.options.HYPERPRIOR_SCALES``: 0.5
    for lognormal, the paper's choice); ``n_pairs`` defaults to ``len(i1)``. Keys the
    program does not read are dropped.

    Raises
    ------
    ValueError
        With the offending field, before any process is started.
    """
    check_model(model)
    if "n_alg" not in data or "i1" not in data:
        raise ValueError("data needs at least n_alg, i1, i2 and the counts")
    n_alg = operator.index(data["n_alg"])
    if n_alg < 2:
        raise ValueError(f"n_alg must be at least 2, got {n_alg}")
    n_pairs = operator.index(data.get("n_pairs", len(data["i1"])))
    out: dict[str, Any] = {"n_alg": int(n_alg), "n_pairs": int(n_pairs)}
    for key in ("i1", "i2", *_COUNTS[model]):
        if key not in data:
            raise ValueError(f"data for the {model} model needs {key!r}")
        out[key] = _as_int_list(key, data[key], n_pairs)
    for k, (a, b) in enumerate(zip(out["i1"], out["i2"], strict=True)):
        if not (1 <= a <= n_alg and 1 <= b <= n_alg):
            raise ValueError(f"pair {k}: algorithm indices ({a}, {b}) outside 1..{n_alg}")
        if a == b:
            raise ValueError(f"pair {k}: an algorithm compared with itself (index {a})")
    for key in _COUNTS[model]:
        if min(out[key], default=0) < 0:
            raise ValueError(f"data[{key!r}] has negative counts")
    hyper = data.get("hyperprior", HYPERPRIORS[DEFAULT_HYPERPRIOR])
    hyper = HYPERPRIORS.get(hyper, hyper) if isinstance(hyper, str) else hyper
    codes = {code: name for name, code in HYPERPRIORS.items()}
    if hyper not in codes:
        raise ValueError(
            f"hyperprior must be one of {sorted(codes)} or {list(HYPERPRIORS)}; got {hyper!r}"
        )
    scale = float(data.get("prior_scale", HYPERPRIOR_SCALES[codes[hyper]]))
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"prior_scale must be a positive finite number, got {scale}")
    out["hyperprior"] = int(hyper)
    out["prior_scale"] = scale  # a float, so that Stan reads it as real even when given 1
    if model == "bbt_groups":
        out.update(_group_fields(data, n_pairs))
    return out


def _group_fields(data: Mapping[str, Any], n_pairs: int) -> dict[str, Any]:
    """``n_groups``, ``group`` and ``tau_scale`` of the group model (``bbt_groups.stan``)."""
    for key in ("n_groups", "group"):
        if key not in data:
            raise ValueError(f"data for the bbt_groups model needs {key!r}")
    n_groups = operator.index(data["n_groups"])
    if n_groups < 2:
        raise ValueError(f"n_groups must be at least 2, got {n_groups}")
    group = _as_int_list("group", data["group"], n_pairs)
    if any(not 1 <= g <= n_groups for g in group):
        raise ValueError(f"data['group'] has indices outside 1..{n_groups}")
    tau_scale = float(data.get("tau_scale", GROUP_TAU_SCALE))
    if not (math.isfinite(tau_scale) and tau_scale > 0):
        raise ValueError(f"tau_scale must be a positive finite number, got {tau_scale}")
    return {"n_groups": int(n_groups), "group": group, "tau_scale": tau_scale}


def add_empty_outputs(
    model: ModelName, params: dict[str, np.ndarray[Any, Any]], data: Mapping[str, Any]
) -> None:
    """Add the per-pair outputs, shaped (chains, draws, 0), that Stan omits when n_pairs is 0.

    ``params`` must hold ``beta`` (to read chains and draws from). Only the BBT programs
    have per-pair outputs.
    """
    if model not in _PAIR_OUTPUTS or data["n_pairs"]:
        return
    chains, draws = params["beta"].shape[:2]
    for name in _PAIR_OUTPUTS[model]:
        dtype = np.int64 if name in INTEGER_OUTPUTS else np.float64
        params.setdefault(name, np.empty((chains, draws, 0), dtype))


class OutputSplitter:
    """Stan's draws, one (draws, columns) array per chain, copied into one array per output.

    ``names`` are Stan's flat column names, as CmdStan's CSV files and httpstan's writers give
    them: ``"lp__"``, ``"sigma"``, ``"beta.3"`` (1-based; our outputs are at most vectors).
    Each output becomes one array shaped (chains, draws) or (chains, draws, size), integer
    outputs as int64 (converted once, in the copy); names ending in ``__`` go to the sampler
    outputs. Chains may be added in any order, each as soon as it is loaded, so that only one
    chain's block is in memory besides the final arrays.
    """

    def __init__(self, names: Sequence[str], n_chains: int) -> None:
        self._names = list(names)
        self._n_chains = n_chains
        self._groups: dict[str, list[int]] = {}
        for j, name in enumerate(self._names):
            self._groups.setdefault(name.split(".", 1)[0], []).append(j)
        self._outputs: dict[str, np.ndarray] = {}

    def add(self, chain: int, block: np.ndarray) -> None:
        """Copy the draws of ``chain`` (0-based), shaped (draws, columns), into the outputs."""
        for base, cols in self._groups.items():
            part = block[:, cols[0] : cols[-1] + 1]
            if base not in self._outputs:
                dtype = np.int64 if base in INTEGER_OUTPUTS else np.float64
                self._outputs[base] = np.empty((self._n_chains, *part.shape), dtype)
            self._outputs[base][chain] = part

    def result(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(parameters, sampler outputs), once every chain was added."""
        params: dict[str, np.ndarray] = {}
        sampler: dict[str, np.ndarray] = {}
        for base, values in self._outputs.items():
            if "." not in self._names[self._groups[base][0]]:  # a scalar: (chains, draws)
                values = values[..., 0]
            (sampler if base.endswith("__") else params)[base] = values
        return params, sampler


def split_outputs(
    names: Sequence[str], chains: Iterable[np.ndarray], n_chains: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(parameters, sampler outputs) of Stan's draws, one (draws, columns) array per chain, in
    order (see ``OutputSplitter``); ``chains`` is consumed one array at a time (pass a
    generator of loads)."""
    splitter = OutputSplitter(names, n_chains)
    for c, chain in enumerate(chains):
        splitter.add(c, chain)
        del chain
    return splitter.result()
