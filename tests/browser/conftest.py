"""Browser harness: JupyterLab on localhost + Debian's headless Chromium, network cut.

* ``lab``: a JupyterLab server started for the test module on 127.0.0.1 with a temporary root
  directory, no token, no update checks, the app exposed as ``window.jupyterapp`` (so the
  test can run cells through JupyterLab's own commands).
* ``frontend``: the same for JupyterLab and for Notebook 7 (the ``notebook`` package), one
  after the other: a test using it runs in both front ends.
* ``browser_context``: Chromium (``/usr/bin/chromium``, driven by the ``playwright`` Python
  package: Playwright's own browser download cannot work here) with a fresh user-data dir.
  Every request to a host other than localhost is aborted and recorded in
  ``context.blocked`` so a test can prove the widget needs no network.

The tests skip when Chromium, Playwright or JupyterLab is missing, except under CI
(``CI=true``), where a missing tool is an error: ``tests/browser/setup.sh`` installs them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
CHROMIUM = os.environ.get("BBT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
#: Seconds a Jupyter server has to answer: on a busy machine its start has taken over 90 s.
SERVER_START_S = 240


def _missing_tools() -> list[str]:
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install playwright)")
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        missing.append("jupyterlab (pip install jupyterlab)")
    return missing


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = _missing_tools()
    if not missing or os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return  # under CI a missing tool fails the fixtures loudly instead
    skip = pytest.mark.skip(reason="browser tools missing: " + ", ".join(missing))
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(url: str, timeout: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise TimeoutError(f"JupyterLab did not answer at {url} within {timeout} s")


class Lab:
    """A running JupyterLab (or Notebook 7): its URL, root folder and a notebook writer."""

    def __init__(self, url: str, root: Path, kind: str = "lab") -> None:
        self.url = url
        self.root = root
        self.kind = kind

    def write_notebook(self, name: str, cells: list[str]) -> str:
        """Write a code-cell notebook into the server's root; returns its lab URL."""
        notebook = {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": f"cell-{i}",
                    "metadata": {},
                    "outputs": [],
                    "source": source,
                }
                for i, source in enumerate(cells)
            ],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        (self.root / name).write_text(json.dumps(notebook), encoding="utf-8")
        if self.kind == "notebook":
            return f"{self.url}/notebooks/{name}"
        # ?reset: a fresh workspace, or JupyterLab would also reopen the notebooks of earlier
        # tests on this server (and their widgets would render on the page too)
        return f"{self.url}/lab/tree/{name}?reset"


#: Command line of each front end; both expose the app as ``window.jupyterapp``.
_FRONTENDS = {
    "lab": [
        "jupyterlab",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",  # the default one searches PyPI
    ],
    "notebook": ["notebook", "--JupyterNotebookApp.expose_app_in_browser=True"],
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    # Module scope: the server (and its kernels) must be gone before other test modules run,
    # some of which check that the test process has no child processes left.
    yield from _serve(tmp_path_factory, "lab")


@pytest.fixture(scope="module", params=["lab", "notebook"])
def frontend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lab]:
    """JupyterLab, then Notebook 7: the test runs in both."""
    if request.param == "notebook":
        pytest.importorskip("notebook", reason="Notebook 7 (pip install notebook)")
    yield from _serve(tmp_path_factory, request.param)


def _serve(tmp_path_factory: pytest.TempPathFactory, kind: str) -> Iterator[Lab]:
    if _missing_tools():
        pytest.fail("browser tools missing: " + ", ".join(_missing_tools()))
    root = tmp_path_factory.mktemp(f"{kind}-root")
    home = tmp_path_factory.mktemp(f"{kind}-home")
    with jupyter_server(kind, root, home) as server:
        yield server


@contextlib.contextmanager
def jupyter_server(kind: str, root: Path, home: Path) -> Iterator[Lab]:
    """Run JupyterLab (``kind="lab"``) or Notebook 7 (``"notebook"``) on localhost.

    ``root`` is the server's root folder, ``home`` holds its private config and settings.
    Also used by ``benchmarks/bench_widget.py`` for its browser-side timings.
    """
    port = _free_port()
    env = dict(os.environ)
    # A private Jupyter config/runtime/workspace, so no user setting or old workspace leaks in;
    # the kernel imports this checkout first (installed or not).
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")])),
    )
    # JupyterLab's news feed and update check are off: they would ask the internet.
    settings = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"checkForUpdates": False, "fetchNews": "false"})
    )
    log_name = f"jupyter{kind}.log"
    log = (root / log_name).open("wb")
    module, *app_args = _FRONTENDS[kind]
    cmd = [
        sys.executable,
        "-m",
        module,
        *app_args,
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--ServerApp.root_dir={root}",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        "--allow-root",  # CI runs as root
    ]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{url}/api/status", SERVER_START_S, proc)
        yield Lab(url, root, kind)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
        ARTIFACTS.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            shutil.copy(root / log_name, ARTIFACTS / log_name)


def open_and_run(page: Any, url: str, timeout_ms: int = 60_000) -> None:
    """Open a notebook and run all its cells through the app's own command, once the kernel
    is up (else "run all" would wait on a kernel dialog)."""
    page.goto(url)
    page.wait_for_selector(".jp-Notebook", timeout=timeout_ms)
    page.wait_for_function(
        """() => {
            const app = window.jupyterapp;
            const panel = app && app.shell.currentWidget;
            const kernel = panel && panel.sessionContext && panel.sessionContext.session
                && panel.sessionContext.session.kernel;
            return kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
        }""",
        timeout=timeout_ms,
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


@pytest.fixture
def run_notebook() -> Any:
    """:func:`open_and_run`, for the test modules (which cannot import a conftest)."""
    return open_and_run


def front_end_own(error: str) -> bool:
    """Whether a page error (``f"{exc.message} @ {exc.stack}"``) was raised inside Notebook 7's
    own core bundle, not by the widget: its start-up reads a settings schema that a fresh
    private settings folder does not have."""
    return "/static/notebook/notebook_core." in error and "bbt" not in error


class SoftChecks:
    """Soft checks: each defect is reported by name, so a run on a broken build lists every
    defect it has, not just the first one."""

    def __init__(self) -> None:
        self.failed: dict[str, str] = {}

    @contextlib.contextmanager
    def check(self, name: str) -> Iterator[None]:
        from playwright.sync_api import Error as PlaywrightError

        try:
            yield
        except (AssertionError, PlaywrightError) as exc:
            self.failed[name] = str(exc).splitlines()[0][:300] if str(exc) else repr(exc)

    def assert_none_failed(self) -> None:
        assert not self.failed, "failed checks:\n" + "\n".join(
            f"- {name}: {why}" for name, why in self.failed.items()
        )


@pytest.fixture
def soft_checks() -> SoftChecks:
    """A fresh :class:`SoftChecks` for the test."""
    return SoftChecks()


@pytest.fixture
def widget_errors() -> Any:
    """The page errors of a list that are not the front end's own (:func:`front_end_own`)."""
    return lambda errors: [e for e in errors if not front_end_own(e)]


@pytest.fixture
def _playwright() -> Iterator[Any]:
    # Per test, not per session: while Playwright's sync API is open, the main thread has a
    # running asyncio loop, and any later test calling asyncio.run() (PyStan does) would fail.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture
def browser_context(_playwright: Any, tmp_path: Path) -> Iterator[Any]:
    """A fresh Chromium profile with every non-localhost request aborted (and recorded)."""
    context = offline_context(_playwright, tmp_path / "chromium-profile")
    try:
        yield context
    finally:
        context.close()


def offline_context(playwright: Any, profile: Path) -> Any:
    """Debian's headless Chromium; requests off localhost are aborted, listed in ``.blocked``."""
    context = playwright.chromium.launch_persistent_context(
        user_data_dir=str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 2400},  # tall: JupyterLab scrolls inside itself
    )
    blocked: list[str] = []

    def gate(route: Any) -> None:
        url = route.request.url
        host = urlparse(url).hostname or ""
        if url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context.route("**/*", gate)
    context.blocked = blocked
    return context


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
