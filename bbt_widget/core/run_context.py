"""What a long job reports to and listens to: :class:`RunContext`, its progress and cancel.

The front doors (``fit``, the engines' ``sample``, ``laplace`` and ``compile_model``, the
widget) take ``progress=`` and ``cancel=`` as users give them and make one
:class:`RunContext`; every layer below passes that one object on, so a new way of reporting
or stopping changes one class, not every signature.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

#: ``progress(stage, fraction)``: stage is e.g. "compiling" or "sampling"; fraction in [0, 1]
#: (``nan`` when unknown). Called from the thread doing the work.
ProgressCallback = Callable[[str, float], None]


class FitCancelled(RuntimeError):
    """Sampling was stopped because a newer request superseded it."""


@dataclass(frozen=True)
class RunContext:
    """A job's progress callback and cancel event (either may be None: nobody listens, or
    nothing can stop it).

    Attributes
    ----------
    progress
        Told ``(stage, fraction)`` as the work advances.
    cancel
        When set, the work stops at its next check with :class:`FitCancelled`.
    """

    progress: ProgressCallback | None = None
    cancel: threading.Event | None = None

    @property
    def cancelled(self) -> bool:
        """Whether the cancel event is set."""
        return self.cancel is not None and self.cancel.is_set()

    def report(self, stage: str, fraction: float) -> None:
        """Tell the progress callback, if any."""
        if self.progress is not None:
            self.progress(stage, fraction)

    def check(self, why: str = "fit cancelled") -> None:
        """Raise :class:`FitCancelled` (saying ``why``) when the cancel event is set."""
        if self.cancelled:
            raise FitCancelled(why)

    def relabelled(self, stage: str, as_stage: str) -> RunContext:
        """The same run, with progress of ``stage`` told as ``as_stage`` (a later round of
        sampling as its own stage, so each stage's fraction runs from 0 to 1 once)."""
        if self.progress is None:
            return self
        told = self.progress

        def relabel(reported: str, fraction: float) -> None:
            told(as_stage if reported == stage else reported, fraction)

        return RunContext(relabel, self.cancel)


#: Nobody listens and nothing stops it.
QUIET = RunContext()
