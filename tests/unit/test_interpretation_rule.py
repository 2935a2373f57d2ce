"""The interpretation rule a report and the widget apply: ``auto`` picks strong beyond ten
algorithms (paper Sec. 5.6) and says why; a rule the user chose is kept and said to be chosen."""

from __future__ import annotations

import pytest

from bbt_widget.core import options


@pytest.mark.parametrize(
    ("given", "n", "rule", "requested", "words"),
    [
        ("auto", 16, "strong", False, "taken by default because with 16 algorithms"),
        ("auto", 10, "weak", False, "taken by default for 10 algorithms"),
        ("weak", 16, "weak", True, "as requested, although with 16 algorithms"),
        ("strong", 5, "strong", True, "as requested."),
    ],
)
def test_auto_interpretation_is_strong_beyond_ten_algorithms(given, n, rule, requested, words):
    got = options.resolve_interpretation(given, n)
    assert (got.rule, got.requested) == (rule, requested)
    assert words in got.reason
    assert ("as requested" in got.reason) == requested  # only when the user chose


def test_auto_is_the_default_and_other_values_are_refused():
    assert options.DEFAULT_INTERPRETATION == "auto"
    with pytest.raises(ValueError, match="interpretation must be one of 'auto', 'weak'"):
        options.resolve_interpretation("strongest", 3)
