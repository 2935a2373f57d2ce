"""What the widget's browser tests read of the page, in one place (the test modules import it
from their folder, which pytest puts on ``sys.path``; a conftest cannot be imported)."""

from __future__ import annotations

from typing import Any

#: Every control (and button) without a tooltip of its own or on its row's label.
UNEXPLAINED = """() => [...document.querySelectorAll(
        '.bbt-root select, .bbt-root input, .bbt-root button, .bbt-root summary')]
    .filter((el) => el.offsetParent !== null)
    .filter((el) => {
        const row = el.closest('.bbt-row');
        const label = row && row.querySelector('.bbt-label');
        return !(el.title || (label && label.title));
    })
    .map((el) => el.outerHTML.slice(0, 120))"""


def data_attr(page: Any, name: str) -> str:
    """data-<name> of the widget element ('' when unset), read through ``dataset`` (the
    attribute of ``dataset.dataUpdates`` is data-data-updates)."""
    value = page.evaluate(
        "(name) => document.querySelector('.bbt-root').parentElement.dataset[name]", name
    )
    return value or ""


def wait_attr(page: Any, name: str, predicate: str, timeout: int) -> None:
    """Wait until data-<name> of the widget element satisfies a JS predicate on ``v``."""
    page.wait_for_function(
        f"""() => {{
            const root = document.querySelector('.bbt-root');
            if (!root) return false;
            const v = root.parentElement.dataset['{name}'] ?? '';
            return {predicate};
        }}""",
        timeout=timeout,
    )
