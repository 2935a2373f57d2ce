"""``bbt.report``: the report and the texts of a fit, for Python users.

* :func:`write`: the report ``bbt-widget report`` writes (HTML, Markdown or LaTeX), with the
  same sections for the same data, options and seed;
* :func:`methods_text`: the methods-and-results paragraph for a manuscript;
* :func:`headline`: the result in one sentence.
"""

from __future__ import annotations

from .headline import headline
from .report import methods_text
from .report_build import OTHER_METHODS, write

__all__ = ["OTHER_METHODS", "headline", "methods_text", "write"]
