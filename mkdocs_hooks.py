"""MkDocs hook: docstrings use Sphinx roles (``:func:`fit```), which mkdocstrings does not read.

Without this hook the API reference shows the role names as text (":func:fit"); the hook
drops the role and keeps the name in code type, as Sphinx shows it.
"""

from __future__ import annotations

import re
from typing import Any

#: A Sphinx role as it reaches the HTML: the role name, then the name in <code>.
_ROLE = re.compile(r":(?:func|meth|class|attr|mod|data|exc|obj):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    """Remove the Sphinx role prefixes from a page's rendered HTML."""
    return _ROLE.sub("", html)
