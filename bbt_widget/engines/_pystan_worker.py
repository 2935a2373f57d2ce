"""Run NUTS chains of an httpstan-compiled Stan model (run as a script, not imported).

Usage: ``python _pystan_worker.py MODULE STATUS_FD``, then the path of a request (JSON) on
stdin.

The PyStan engine starts this script in a subprocess of its own process group, usually ahead of
time (a warm worker: starting Python, importing numpy and loading the model take a third of a
small fit). It loads the compiled model (the httpstan extension module in our cache), reports
``ready``, waits for a request on stdin, and forks one process per chain. Each chain calls
httpstan's ``hmc_nuts_diag_e_adapt_wrapper`` on its process's main thread (Stan's autodiff stack
is thread-local and only initialised for the main thread: other threads crash), while a reader
thread takes the draws off httpstan's callback sockets into ``chain-<c>.npy`` in the request's
output directory (a memory map, so the draws never sit twice in memory) and reports progress.
One worker serves one fit, then exits.

Status lines written to the file descriptor STATUS_FD (each shorter than PIPE_BUF, so writes
from several chains never interleave): ``ready`` once the model is loaded, ``progress <chain>
<iteration>``, then ``done`` or ``failed <chain> <signal>`` (the signal that killed that chain,
0 if none); ``load-failed <reason>`` instead of ``ready`` when the model does not load. Per
chain it also writes ``chain-<c>.json`` (column names and Stan's messages) and, on failure,
``chain-<c>.error``.

A request with ``"method": "laplace"`` gets a Laplace approximation instead (``_laplace.py``):
``laplace.npy`` and ``laplace.json`` in the output directory, ``laplace.error`` on failure.
Such a worker then serves further Laplace requests, one path per line of stdin (``done`` or
``failed 0 0`` after each), until stdin closes: the engine keeps it for the widget's next
preview. It never forks chains afterwards.

Self-contained on purpose (stdlib, numpy, pysimdjson when present, and ``_orphans.py`` and
``_laplace.py`` beside it): it must not import bbt_widget, whose import is slow and which need
not be importable from here.
"""

import json
import os
import re
import signal
import socket
import sys
import threading
import traceback
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the same modules, as the type checker finds them in the package
    from bbt_widget.engines._laplace import approximate, warm_up
    from bbt_widget.engines._orphans import die_with_parent, watch_parent
else:  # beside this script, which runs as `python <path>`
    from _laplace import approximate, warm_up
    from _orphans import die_with_parent, watch_parent

try:  # PyStan's own dependency; much faster than json for wide draws
    import simdjson
except ImportError:  # pragma: no cover
    simdjson = None  # type: ignore[assignment]

_ITERATION = re.compile(r"Iteration:\s*(\d+)\s*/\s*(\d+)")
_DRAW = b'{"version":1,"topic":"sample","values":{'
# Stan's routine chatter, not worth passing on
_BOILERPLATE_RE = re.compile(
    r"^(Elapsed Time:|Gradient evaluation took|Adjust your expectations)"
    r"|transitions using 10 leapfrog steps|seconds \((Warm-up|Sampling|Total)\)$"
)


def _send(fd: int, text: str) -> None:
    try:
        os.write(fd, (text + "\n").encode())
    except OSError:  # the engine stopped listening (cancelled); it is about to kill us
        pass


class _ChainOutput:
    """Reads one chain's callback sockets: draws to a memory map, progress to the status fd."""

    def __init__(self, chain: int, out_dir: Path, num_samples: int, status_fd: int) -> None:
        self.chain = chain
        self.out_dir = out_dir
        self.num_samples = num_samples
        self.status_fd = status_fd
        self.names: list[str] = []
        self.messages: list[str] = []
        self.draws: np.memmap[Any, np.dtype[np.float64]] | None = None
        self.n_draws = 0
        self.sampler_returned = threading.Event()
        self.errors: list[str] = []
        self._parser = simdjson.Parser() if simdjson is not None else None

    def serve(self, server: socket.socket) -> None:
        """Accept httpstan's writer connections until the sampler has returned."""
        server.settimeout(0.01)  # how late the end of the chain is noticed: keep it short
        readers = []
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                # all connections are made before sampling starts, so once the sampler has
                # returned and none is pending, none will come
                if self.sampler_returned.is_set():
                    break
                continue
            conn.setblocking(True)
            reader = threading.Thread(target=self._read, args=(conn,), daemon=True)
            reader.start()
            readers.append(reader)
        for reader in readers:
            reader.join()

    def _read(self, conn: socket.socket) -> None:
        try:
            with conn, conn.makefile("rb", buffering=1 << 20) as stream:
                first = stream.readline()
                if not first:
                    return
                topic = json.loads(first)["topic"]
                if topic == "sample":
                    self._sample_line(first)
                    for line in stream:
                        self._sample_line(line)
                elif topic == "logger":
                    self._logger_line(first)
                    for line in stream:
                        self._logger_line(line)
                else:  # "initialization" and "diagnostic": must be drained, are not needed
                    while stream.read(1 << 20):
                        pass
        except Exception:  # reported by the chain, which then fails
            self.errors.append(traceback.format_exc())

    def _sample_line(self, line: bytes) -> None:
        if not line.startswith(_DRAW):
            return  # adaptation messages (step size, metric) come as a list of strings
        if self.draws is None:
            values = json.loads(line)["values"]
            self.names = list(values)
            self.draws = np.lib.format.open_memmap(
                self.out_dir / f"chain-{self.chain}.npy",
                mode="w+",
                dtype=np.float64,
                shape=(self.num_samples, len(self.names)),
            )
            row = list(values.values())
        else:
            row = self._values(line)
        if self.n_draws >= self.num_samples:
            raise RuntimeError(f"more than the {self.num_samples} requested draws")
        self.draws[self.n_draws] = row
        self.n_draws += 1

    def _values(self, line: bytes) -> list[float]:
        if self._parser is not None:
            try:
                doc: Any = self._parser.parse(line)
            except ValueError:  # NaN or Infinity, which simdjson rejects; json reads them
                pass
            else:
                try:
                    return list(doc["values"].values())
                finally:
                    del doc  # a simdjson parser is reusable only once its documents are gone
        return list(json.loads(line)["values"].values())

    def _logger_line(self, line: bytes) -> None:
        text = json.loads(line)["values"][0]
        found = _ITERATION.search(text)
        if found:
            _send(self.status_fd, f"progress {self.chain} {found.group(1)}")
            return
        if text.startswith(("info:", "warn:", "error:", "debug:", "fatal:")):
            text = text.split(":", 1)[1]
        text = text.strip()
        if text and not (_BOILERPLATE_RE.search(text)) and len(self.messages) < 100:
            self.messages.append(text)

    def finish(self) -> None:
        if self.draws is not None:
            self.draws.flush()
            del self.draws
        meta = {"names": self.names, "messages": self.messages, "n_draws": self.n_draws}
        (self.out_dir / f"chain-{self.chain}.json").write_text(json.dumps(meta))


def _write_error(path: Path, text: str) -> None:
    """Write a chain's error so that a reader never sees it half written.

    The engine reads the error files as soon as one chain fails; another chain may be writing
    its own at that moment, so the file appears only once complete (rename is atomic).
    """
    part = path.with_name(path.name + ".part")
    part.write_text(text)
    os.replace(part, path)


def _run_chain(module: Any, request: dict[str, Any], chain: int, status_fd: int) -> int:
    out_dir = Path(request["out_dir"])
    output = _ChainOutput(chain, out_dir, request["num_samples"], status_fd)
    sock_path = out_dir / f"chain-{chain}.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock_path))
    server.listen(8)  # httpstan connects 4 writers (logger, init, sample, diagnostic)
    serving = threading.Thread(target=output.serve, args=(server,), daemon=True)
    serving.start()
    error = ""
    try:
        return_code = module.hmc_nuts_diag_e_adapt_wrapper(
            str(sock_path),
            request["data"],
            {},  # init: Stan's default, uniform(-2, 2) on the unconstrained scale
            request["seed"],
            chain,
            2.0,  # init_radius
            request["num_warmup"],
            request["num_samples"],
            1,  # num_thin
            False,  # save_warmup
            request["refresh"],
            1.0,  # stepsize (initial)
            0.0,  # stepsize_jitter
            request["max_depth"],
            request["delta"],
            0.05,  # gamma
            0.75,  # kappa
            10.0,  # t0
            75,  # init_buffer
            50,  # term_buffer
            25,  # window
        )
        if return_code != 0:
            error = f"Stan returned error code {return_code}"
    except Exception as exc:  # e.g. "Initialization failed." or a data error
        error = f"{type(exc).__name__}: {exc}"
    finally:
        output.sampler_returned.set()
        serving.join()
        server.close()
        sock_path.unlink(missing_ok=True)
    output.finish()
    if not error and output.errors:
        error = output.errors[0]
    if not error and output.n_draws != request["num_samples"]:
        error = f"received {output.n_draws} of {request['num_samples']} draws"
    if error:
        details = "\n".join(output.messages[-20:])
        _write_error(out_dir / f"chain-{chain}.error", error + ("\n" + details if details else ""))
        return 1
    return 0


def _run_laplace(module: Any, request: dict[str, Any], status_fd: int) -> int:
    """A Laplace approximation instead of chains, on this process's main thread (Stan's
    autodiff needs it): ``laplace.npy`` (draws x columns) and ``laplace.json`` (names)."""
    out_dir = Path(request["out_dir"])
    data = request["data"]
    try:
        names, draws, info = approximate(
            module, request["model"], data, request["draws"], request["seed"]
        )
        np.save(out_dir / "laplace.npy", draws)
        (out_dir / "laplace.json").write_text(json.dumps({"names": names, **info}))
    except Exception as exc:  # LaplaceError, or Stan rejecting the data
        _write_error(out_dir / "laplace.error", f"{type(exc).__name__}: {exc}")
        _send(status_fd, "failed 0 0")
        return 1
    _send(status_fd, "done")
    return 0


def _serve_laplace(module: Any, request: dict[str, Any], status_fd: int) -> int:
    """Laplace approximations, the first ``request`` and then one per line of stdin, until
    the engine closes it (a widget asks one per control change: no process start each)."""
    while True:
        code = _run_laplace(module, request, status_fd)
        if code:
            return code
        request_path = sys.stdin.readline().strip()
        if not request_path:
            return 0
        request = json.loads(Path(request_path).read_text())
        if request.get("method") != "laplace":
            # chains are forked only by a worker that has run nothing (numpy's linear algebra
            # may have started threads, and a fork with threads alive can deadlock): the
            # engine never sends one here
            _write_error(Path(request["out_dir"]) / "laplace.error", "a Laplace worker got a fit")
            _send(status_fd, "failed 0 0")
            return 1


def _load_module(path: str) -> Any:
    spec = spec_from_file_location("stan_services", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python extension module: {path}")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    module_path, status_fd = sys.argv[1], int(sys.argv[2])
    try:
        module = _load_module(module_path)
    except Exception as exc:  # a damaged cached model; a crash in dlopen (SIGBUS) says it too
        _send(status_fd, f"load-failed {type(exc).__name__}: {exc}"[:500].replace("\n", " "))
        return 1
    # the model module imports it on every call; do it once, before the chains fork
    import httpstan.utils  # type: ignore[import-untyped, unused-ignore]  # noqa: F401

    # A preview's first approximation in this process would pay numpy's first-use costs while
    # a fit's chains run beside it; a worker waiting for a request has the time.
    warm_up()
    _send(status_fd, "ready")
    # Started ahead of time, we wait here for the fit. No PR_SET_PDEATHSIG for this process:
    # the thread that started us may be gone by the time we run (it is tied to that thread,
    # not to the process); an idle worker ends instead when the engine's end of stdin closes.
    request_path = sys.stdin.readline().strip()
    if not request_path:
        return 0
    request = json.loads(Path(request_path).read_text())
    if request.get("method") == "laplace":
        return _serve_laplace(module, request, status_fd)
    sys.stdin.close()

    # Fork while single-threaded (a fork with threads alive can deadlock the child).
    pids = {}
    for chain in range(1, request["chains"] + 1):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                die_with_parent()  # chains end with this process, e.g. when it is killed
                code = _run_chain(module, request, chain, status_fd)
            except BaseException:
                _write_error(
                    Path(request["out_dir"]) / f"chain-{chain}.error", traceback.format_exc()
                )
            finally:
                os._exit(code)
        pids[pid] = chain
    # If the engine's process dies mid-fit (a kernel killed by the user), end the whole fit
    # (we lead our process group, which holds the chains) and remove its files, which the
    # engine can no longer do.
    watch_parent([request["out_dir"]], interval=0.5)
    failed, killed_by = 0, 0
    while pids:
        pid, wait_status = os.wait()
        chain = pids.pop(pid)
        if wait_status != 0 and not failed:
            failed = chain
            # a chain killed by a signal could not say why; SIGKILL is what an OOM kill sends
            killed_by = os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else 0
            for other in pids:  # the fit is lost; do not make the user wait for the rest
                os.kill(other, signal.SIGKILL)
    _send(status_fd, f"failed {failed} {killed_by}" if failed else "done")
    return 1 if failed else 0


if __name__ == "__main__":
    code = main()
    # The outputs are written and closed and the status is sent: skip the interpreter's
    # teardown (freeing numpy, httpstan and the model). A preview's worker
    # exits while its full fit's chains run, and that teardown would take their CPU.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
