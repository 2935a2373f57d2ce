"""What a report is asked to hold, checked once at :func:`bbt_widget.report.write`'s door.

``write`` (and the command line) turn their keywords into a :class:`ReportRequest`, which runs
every check that needs no data when built, before any fit; the builder passes it down whole,
so no layer below re-spells the keywords.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.options import (
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    DEFAULT_TITLE,
    RuleChoice,
    resolve_interpretation,
)
from ...core.validation import check_hdi, check_rope
from .._atomic import missing_folder
from ..methods_text import check_report_paths
from ._methods import methods_from

if TYPE_CHECKING:
    from ...core.draws import ProgressCallback


@dataclass(frozen=True)
class ReportRequest:
    """A report's options, as :func:`bbt_widget.report.write` takes them (see there), each
    checked that needs no data when built: ``rope`` becomes a pair of floats, ``hdi`` a float
    and ``more_data`` a tuple of ints.

    Raises
    ------
    ValueError
        A bad ``methods``, ``rope``, ``hdi``, ``interpretation`` or ``more_data``, or a
        ``path`` whose folder is missing (naming the keyword and the fix).
    OutputConflictError
        A symbolic link where the report or one of its folders goes, or a folder holding
        files no earlier report wrote.

    Attributes
    ----------
    path
        The report file, as given.
    methods
        ``methods=`` as given (``None``: the defaults alone); which run is decided against
        the data (:func:`~bbt_widget.outputs.report._methods.check_methods`).
    robustness, rho, more_data
        The optional sections: the sweep and influence, the hierarchical t-test's
        correlation, the numbers of more data sets of the "More data sets" section.
    rope, hdi, interpretation, control, title, provenance, highlight
        How the report reads and shows the fit.
    progress, log
        Where the steps' stages and their one-line summaries go.
    """

    path: str | Path
    methods: str | Sequence[str] | None = None
    robustness: bool = False
    rho: float | None = None
    rope: tuple[float, float] = DEFAULT_ROPE
    hdi: float = DEFAULT_HDI
    interpretation: RuleChoice = DEFAULT_INTERPRETATION
    control: str | None = None
    title: str = DEFAULT_TITLE
    provenance: Mapping[str, str] | None = None
    highlight: str | Sequence[str] | None = None
    more_data: tuple[int, ...] | None = None
    progress: ProgressCallback | None = field(default=None, compare=False)
    log: Callable[[str], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # the types above are what the request holds once built: a rope or more_data given
        # as another sequence (a list, "50,100") is converted here
        if self.more_data is not None:
            from ._more_data import parse_more_data

            object.__setattr__(self, "more_data", parse_more_data(self.more_data))
        problem = missing_folder(self.path)
        if problem is not None:  # before any fit: nothing is computed for a report not written
            raise ValueError(f"path {str(self.path)!r}: {problem}")
        check_report_paths(self.path)
        methods_from(self.methods)  # the names, checked
        resolve_interpretation(self.interpretation, 2)  # the word, checked
        object.__setattr__(self, "rope", check_rope(self.rope))
        object.__setattr__(self, "hdi", check_hdi(self.hdi))

    def shown(self) -> dict[str, Any]:
        """The keywords of the report's renderer that say how the fit is shown."""
        return {
            "rope": self.rope,
            "hdi": self.hdi,
            "interpretation": self.interpretation,
            "control": self.control,
            "highlight": self.highlight,
        }

    def tell(self, line: str) -> None:
        """Log ``line`` (a finished step: what it did, how long) if a log was given."""
        if self.log is not None:
            self.log(line)
