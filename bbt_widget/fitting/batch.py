"""One batch layer for many fits: sweeps, influence refits, calibration repeats and the
hierarchical t-test of every pair.

A list of :class:`BatchJob` (a BBT fit request of :mod:`bbt_widget.lab.batch`, a hierarchical
t-test of one pair, ...) goes in; one :class:`FitOutcome` per job comes out, in the same
order. Each fit gets its own seed from ``numpy.random.SeedSequence(seed).spawn(n)``, so the
numbers depend on the user's seed and the position of the request only, never on the
executor or on how many workers run. The runner knows nothing of what a job fits, so every
method layer above (the lab, the baselines) runs its fits through it.

Executors
---------
``executor=None``
    All local cores: one thread per core, each driving one fit (a Stan engine's runs in a
    child process of its own, which the thread only waits on and which is killed on
    cancellation; the numpy engine's runs in the thread).
``executor=<dask.distributed.Client>`` (or a scheduler address such as ``"tcp://host:8786"``)
    One Dask task per fit. Each worker compiles the Stan program once into its own cache (the
    first task there pays for it); only the win tables travel to the workers, and results come
    back in order. Cancelling sets a ``distributed.Event`` that running tasks poll, so their
    samplers are killed on the workers too.

A fit that fails (bad data, a sampler error) becomes an outcome with its ``error`` text; the
other fits are kept. Cancellation raises :class:`~bbt_widget.engines.FitCancelled` once every
running fit has stopped, so no sampler process is left behind.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from ..core.draws import ProgressCallback
from ..core.result import BBTResult
from ..core.run_context import QUIET, RunContext
from ..core.validation import DEFAULT_SEED, check_count, check_seed
from ..engines.base import FitCancelled
from .prepared import DiagnosticsWarning, DisconnectedWarning

#: Warnings a fit issues that the batch keeps with the fit's row instead.
_PER_FIT_WARNINGS = (DiagnosticsWarning, DisconnectedWarning)
#: ``reduce(result, request) -> anything``: applied to each result where it was fitted (on the
#: Dask worker, or right away locally) so that only what the caller needs is kept or travels.
Reducer = Callable[[Any, Any], Any]


class BatchJob(Protocol):
    """Any fit the batch can run (a BBT fit, :class:`bbt_widget.lab.batch.FitRequest`; a
    hierarchical t-test of one pair): ``check()`` validates it before the first fit starts
    and returns it; ``run(seed, context)`` fits it (passing the context's progress and
    cancel on to :func:`bbt_widget.engines.sample`) and returns the result and its
    diagnostics warnings. It must be picklable to run on Dask."""

    @property
    def meta(self) -> dict[str, Any]: ...

    def check(self) -> BatchJob: ...

    def run(self, seed: int, context: RunContext) -> tuple[Any, list[str]]: ...


@dataclass
class FitOutcome:
    """What one request gave: ``value`` (the result, or what ``reduce`` made of it) or
    ``error`` (the failure's text); ``warnings`` holds diagnostics warnings of the fit."""

    request: BatchJob
    seed: int
    value: Any = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the fit succeeded."""
        return self.error is None


def spawn_seeds(seed: int | None, n: int) -> list[int]:
    """``n`` independent Stan seeds from one user seed (``SeedSequence(seed).spawn(n)``)."""
    root = np.random.SeedSequence(check_seed(seed))
    return [int(child.generate_state(1)[0] % (2**31 - 1)) for child in root.spawn(n)]


def _slim(result: BBTResult) -> BBTResult:
    """The result without its cached summaries (ArviZ data, sorted draws): they are rebuilt on
    demand, and pickling them would multiply what travels back from a Dask worker."""
    out = object.__new__(type(result))
    out.__dict__.update(
        {
            k: v
            for k, v in vars(result).items()
            if not isinstance(getattr(type(result), k, None), cached_property)
        }
    )
    return out


def _fit_one(
    request: BatchJob,
    seed: int,
    reduce: Reducer | None,
    context: RunContext,
) -> FitOutcome:
    """Run one request; any failure but cancellation becomes the outcome's error."""
    start = time.perf_counter()
    outcome = FitOutcome(request, seed)
    try:
        # the fit's warnings are kept with its row (run_batch silences them: warning filters
        # are process-wide, so they cannot be set per fit thread)
        result, outcome.warnings = request.run(seed, context)
        if reduce is not None:
            outcome.value = reduce(result, request)
        else:
            outcome.value = _slim(result) if isinstance(result, BBTResult) else result
    except FitCancelled:
        raise
    except Exception as exc:  # kept as a row: one bad fit must not lose the others
        outcome.error = f"{type(exc).__name__}: {exc}"
    outcome.seconds = time.perf_counter() - start
    return outcome


def run_batch(
    requests: Sequence[BatchJob],
    *,
    seed: int | None = DEFAULT_SEED,
    executor: Any = None,
    n_jobs: int | None = None,
    reduce: Reducer | None = None,
    context: RunContext = QUIET,
) -> list[FitOutcome]:
    """Run many fits; outcomes in the order of ``requests``.

    Parameters
    ----------
    requests
        The fits to run (validated before the first one starts).
    seed
        The user's seed; fit ``k`` uses ``spawn_seeds(seed, n)[k]`` whatever the executor.
    executor
        ``None`` (local processes), a ``dask.distributed.Client`` or a scheduler address.
    n_jobs
        Local fits run at once (default: the number of cores). Ignored with Dask.
    reduce
        ``reduce(result, request)`` keeps only what is needed of each result (must be
        picklable, e.g. a module-level function, for Dask).
    context
        Its progress is told ``("compiling", nan)`` while a model compiles, then
        ``("fitting", f)`` with ``f`` the finished share of the whole batch; setting its
        cancel stops the batch: running fits are killed, then ``FitCancelled`` is raised.

    Returns
    -------
    list of FitOutcome
        One per request, same order; failed fits carry ``error``.
    """
    requests = [r.check() for r in requests]
    seeds = spawn_seeds(seed, len(requests))
    if not requests:
        return []
    client = None if executor is None else _dask_client(executor)
    try:
        with warnings.catch_warnings():
            # reported per fit in FitOutcome.warnings, not n times here
            for category in _PER_FIT_WARNINGS:
                warnings.simplefilter("ignore", category)
            if client is None:
                return _run_local(requests, seeds, n_jobs, reduce, context)
            return _run_dask(client, requests, seeds, reduce, context)
    finally:
        if isinstance(executor, str) and client is not None:
            client.close()  # ours, made from the address: the user's own client stays open


# --------------------------------------------------------------------------- local


class _Progress:
    """Sums the fractions of the fits of a batch into one fraction (thread-safe)."""

    def __init__(self, n: int, context: RunContext) -> None:
        self.parts = [0.0] * n
        self.context = context
        self.lock = threading.Lock()

    def for_fit(self, k: int) -> ProgressCallback:
        def report(stage: str, fraction: float) -> None:
            if stage == "sampling" and np.isfinite(fraction):
                self.set(k, fraction)
            elif stage == "compiling":
                self.context.report(stage, fraction)

        return report

    def set(self, k: int, fraction: float) -> None:
        with self.lock:
            self.parts[k] = max(self.parts[k], min(1.0, fraction))
            total = sum(self.parts) / len(self.parts)
        self.context.report("fitting", total)


def _run_local(
    requests: list[BatchJob],
    seeds: list[int],
    n_jobs: int | None,
    reduce: Reducer | None,
    context: RunContext,
) -> list[FitOutcome]:
    n_jobs = check_count(n_jobs if n_jobs is not None else os.cpu_count() or 1, "n_jobs")
    stop = threading.Event()  # ours: set on cancel or on an unexpected error in a fit
    tracker = _Progress(len(requests), context)
    outcomes: list[FitOutcome | None] = [None] * len(requests)

    def one(k: int) -> FitOutcome:
        if stop.is_set():
            raise FitCancelled("batch cancelled")
        out = _fit_one(requests[k], seeds[k], reduce, RunContext(tracker.for_fit(k), stop))
        tracker.set(k, 1.0)
        return out

    with ThreadPoolExecutor(max_workers=min(n_jobs, len(requests))) as pool:
        pending = {pool.submit(one, k): k for k in range(len(requests))}
        try:
            while pending:
                done, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                if context.cancelled:
                    stop.set()
                for fut in done:
                    k = pending.pop(fut)
                    outcomes[k] = fut.result()  # FitCancelled only when stop is set
        except BaseException:
            stop.set()  # the running fits kill their samplers; the pool waits for them
            for fut in pending:
                fut.cancel()
            raise
    context.check("batch cancelled")
    return outcomes  # type: ignore[return-value]


# --------------------------------------------------------------------------- Dask


#: A Dask scheduler address: an optional protocol, then host (a name, an IPv4 address or an
#: IPv6 address in brackets) and port, e.g. ``tcp://host:8786`` or ``10.0.0.5:8786``; or the
#: in-process address of a ``LocalCluster(processes=False)``.
_SCHEDULER_ADDRESS = re.compile(
    r"^(?:inproc://\S+"
    r"|(?:(?:tcp|tls|ucx|ws|wss)://)?(?:\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+):[0-9]{1,5})$"
)
#: The executors a batch accepts, for the messages that refuse another.
EXECUTOR_FORMS = (
    "None (the local cores), a dask.distributed.Client, or a scheduler address with its "
    "port such as 'tcp://host:8786'"
)


def check_executor(executor: Any, name: str = "executor") -> Any:
    """Refuse an executor no batch can run on, before the data are read or a fit starts.

    Only the form is checked (no connection is made): ``None``, a string that is a scheduler
    address, or another object (a Dask client, checked when the batch starts). ``name`` is
    what the message calls the argument.

    Raises
    ------
    ValueError
        A string that is not a scheduler address (e.g. ``"local"``: pass ``None``).
    TypeError
        A number or bytes.
    """
    if executor is None:
        return None
    if isinstance(executor, str):
        if not _SCHEDULER_ADDRESS.match(executor):
            raise ValueError(f"{name} {executor!r} is not an executor; give {EXECUTOR_FORMS}")
    elif isinstance(executor, (bytes, int, float)):
        raise TypeError(f"{name} must be {EXECUTOR_FORMS}; got {type(executor).__name__}")
    return executor


def _dask_client(executor: Any) -> Any:
    """The Dask client to use, with a clear error when there is no usable cluster."""
    check_executor(executor)
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            "running fits on a Dask cluster needs dask.distributed: "
            'pip install "bbt-widget[dask]" (or pass executor=None to use the local cores)'
        ) from None
    if isinstance(executor, str):
        try:
            executor = Client(executor, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(
                f"could not reach the Dask scheduler at {executor!r} ({exc}); check the "
                "address and that the scheduler runs, or pass executor=None to use the local "
                "cores"
            ) from None
    if not isinstance(executor, Client):
        raise TypeError(f"executor must be {EXECUTOR_FORMS}; got {type(executor).__name__}")
    if executor.status != "running":
        raise ConnectionError(
            f"the Dask client is {executor.status!r}, not connected to a scheduler; create a "
            "new Client('tcp://host:8786') or pass executor=None to use the local cores"
        )
    # the client's scheduler connection (None once the client is closed)
    address = getattr(executor.scheduler, "address", None)
    try:
        workers = executor.scheduler_info()["workers"]
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(
            f"the Dask scheduler at {address!r} does not answer ({exc}); "
            "check that it still runs, or pass executor=None to use the local cores"
        ) from None
    if not workers:
        raise ConnectionError(
            f"the Dask cluster at {address!r} has no workers; start some "
            "(dask worker <address>) or pass executor=None to use the local cores"
        )
    return executor


def _dask_task(request: BatchJob, seed: int, reduce: Reducer | None, event: str) -> FitOutcome:
    """Runs on a Dask worker: one fit, stopped when the batch's cancel event is set."""
    from distributed import Event, get_client

    for category in _PER_FIT_WARNINGS:  # kept in FitOutcome.warnings
        warnings.simplefilter("ignore", category)
    cancel = threading.Event()
    # the client is fetched here, in the task's thread: the watcher thread has none of its own
    remote = Event(event, client=get_client())
    finished = threading.Event()

    def watch() -> None:
        # poll the scheduler's event: a set one kills this fit's sampler processes here
        while not finished.wait(0.25):
            try:
                if remote.is_set():
                    cancel.set()
                    return
            except Exception:  # a lost connection: Dask itself ends or reruns this task
                continue

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        return _fit_one(request, seed, reduce, RunContext(cancel=cancel))
    finally:
        finished.set()
        watcher.join()


def _run_dask(
    client: Any,
    requests: list[BatchJob],
    seeds: list[int],
    reduce: Reducer | None,
    context: RunContext,
) -> list[FitOutcome]:
    from distributed import Event, as_completed

    name = f"bbt-widget-cancel-{uuid.uuid4().hex}"
    stop = Event(name, client=client)
    futures = [
        client.submit(_dask_task, r, s, reduce, name, pure=False, key=f"bbt-fit-{k}-{name}")
        for k, (r, s) in enumerate(zip(requests, seeds))
    ]
    index = {f.key: k for k, f in enumerate(futures)}
    outcomes: list[FitOutcome | None] = [None] * len(requests)
    done = 0
    try:
        pending = as_completed(futures)
        while not pending.is_empty():
            context.check("batch cancelled")
            try:
                batch = pending.next_batch(block=False)
            except StopIteration:
                break
            if not batch:
                time.sleep(0.1)
                continue
            for fut in batch:
                k = index[fut.key]
                try:
                    outcomes[k] = fut.result()
                except FitCancelled:
                    raise
                except Exception as exc:  # the task itself died (e.g. a worker was lost)
                    outcomes[k] = FitOutcome(requests[k], seeds[k], error=_task_error(exc))
                done += 1
                context.report("fitting", done / len(requests))
    except BaseException:
        stop.set()  # running tasks see it within 0.25 s and kill their samplers
        client.cancel(futures)
        raise
    finally:
        for fut in futures:
            fut.release()
    return outcomes  # type: ignore[return-value]


def _task_error(exc: BaseException) -> str:
    return f"{type(exc).__name__} on the Dask cluster: {exc}"
