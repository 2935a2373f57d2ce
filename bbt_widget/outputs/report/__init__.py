"""``bbt.report``: the report and the texts of a fit, for Python users.

* :func:`write`: the report ``bbt-widget report`` writes (HTML, Markdown or LaTeX), with the
  same sections for the same data, options and seed;
* :func:`methods_text`: the methods-and-results paragraph for a manuscript;
* :func:`headline`: the result in one sentence;
* :func:`bibtex`: the BibTeX entries of the works a report cites (a ``.tex`` report writes
  them beside it as ``<name>.bib``).
"""

from __future__ import annotations

from ..citations import bibtex
from ..headline import headline
from ..methods_text import methods_text
from ._build import OTHER_METHODS, write

__all__ = ["OTHER_METHODS", "bibtex", "headline", "methods_text", "write"]
