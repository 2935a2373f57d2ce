"""The Stan engines' compiles (``engines._child.ensure_built``): one build per model at a time,
joined by every fit that needs it, and forgotten once it ends."""

from __future__ import annotations

import time
from concurrent.futures import Future

import pytest

from bbt_widget.core.run_context import QUIET
from bbt_widget.engines import _child


class _SlowToTell(Future):  # type: ignore[type-arg]
    """A future whose outcome reaches its waiters a moment before the build thread goes on:
    the window in which a call right after a failed build could find it still listed."""

    def set_exception(self, exception: BaseException | None) -> None:
        super().set_exception(exception)
        time.sleep(0.3)


def test_a_build_after_a_failed_one_starts_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next call tries again (the docstring's promise): it must not join the failed build
    and get its stale error, however soon it comes."""
    monkeypatch.setattr(_child, "Future", _SlowToTell)

    def fails() -> None:
        raise RuntimeError("the first build failed")

    with pytest.raises(RuntimeError, match="the first build failed"):
        _child.ensure_built("test retry", fails, QUIET)
    built: list[str] = []
    _child.ensure_built("test retry", lambda: built.append("again"), QUIET)  # right after
    assert built == ["again"]
