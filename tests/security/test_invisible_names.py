"""Names that differ only by an invisible character (a zero-width space pasted from a web
page, a soft hyphen, a byte-order mark, a word joiner) were fitted as two algorithms, and the
LaTeX report, which drops the character, read "svm is better than svm". Invisible characters
now leave every name (with a DataWarning that shows them escaped); names that become one are
merged, or refused when both hold a result; names that differ only by bidi controls are
refused."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.names import clean_name

#: Zero-width space, soft hyphen, byte-order mark, word joiner, zero-width non-joiner and
#: joiner, left-to-right and right-to-left marks, Arabic letter mark.
INVISIBLE = [
    "\u200b",
    "\u00ad",
    "\ufeff",
    "\u2060",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u200f",
    "\u061c",
]


def _wide(names: list[str], n: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"db": [f"d{i}" for i in range(n)], **{a: rng.random(n) for a in names}})


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_two_columns_differing_by_an_invisible_character_are_refused(char):
    with pytest.raises(ValueError) as err:
        bbt.win_table(_wide(["svm", f"svm{char}", "rf"]), dataset="db")
    message = str(err.value)
    assert f"columns 'svm' and 'svm\\u{ord(char):04x}'" in message or (
        f"columns 'svm' and 'svm\\x{ord(char):02x}'" in message
    )
    assert "are one algorithm once invisible characters" in message
    assert "drop one" in message and "rename one" in message


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_an_invisible_character_leaves_a_name_with_a_warning(char):
    with pytest.warns(bbt.DataWarning, match="held invisible characters") as caught:
        table = bbt.win_table(_wide([f"{char}svm{char}", "rf", "knn"]), dataset="db")
    assert set(table["alg1"]) | set(table["alg2"]) == {"svm", "rf", "knn"}
    said = " ".join(str(w.message) for w in caught)
    assert ascii(f"{char}svm{char}") in said  # escaped, so the reader sees what was there


def test_long_form_names_one_apart_by_invisible_characters_are_one_algorithm():
    # two tables concatenated, one of them written by a tool that adds a zero-width space
    long = pd.DataFrame(
        {
            "db": ["a", "a", "b", "b", "c\u200b", "c"],
            "alg": ["svm", "rf", "svm\u200b", "rf", "svm", "rf\u2060"],
            "acc": [0.9, 0.8, 0.7, 0.75, 0.6, 0.5],
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bbt.fit(long, dataset="db", algorithm="alg", score="acc", iter_sampling=200)
    assert sorted(res.algorithms) == ["rf", "svm"]
    said = " ".join(str(w.message) for w in caught if issubclass(w.category, bbt.DataWarning))
    assert "'svm' and 'svm\\u200b' into 'svm'" in said
    assert "data-set names held invisible characters" in said


def test_one_result_twice_once_invisible_characters_are_removed_is_refused():
    long = pd.DataFrame(
        {"db": ["a", "a", "a"], "alg": ["svm", "svm\ufeff", "rf"], "acc": [0.9, 0.8, 0.7]}
    )
    with pytest.raises(ValueError, match=r"rows 0 and 1 give two results .*'svm\\ufeff'"):
        bbt.win_table(long, dataset="db", algorithm="alg", score="acc")


@pytest.mark.parametrize("control", ["\u202e", "\u202b", "\u2067", "\u2069", "\u202c"])
def test_names_that_differ_only_by_bidi_controls_are_refused(control):
    with pytest.raises(ValueError) as err:
        bbt.win_table(_wide(["rev", f"{control}rev", "rf"]), dataset="db")
    message = str(err.value)
    assert f"'rev' and '\\u{ord(control):04x}rev' differ only by bidi controls" in message
    assert "rename one so that they differ in visible characters" in message
    data = _wide(["svm", "rf"]).assign(db=["d0", f"{control}d0", "d2", "d3", "d4", "d5"])
    with pytest.raises(ValueError, match=r"the data set names 'd0' and .* differ only by bidi"):
        bbt.win_table(data, dataset="db")


def test_bidi_names_that_collide_with_nothing_are_kept():
    # their outputs isolate them (tests/security/test_bidi_names.py)
    table = bbt.win_table(_wide(["\u202erev", "rf", "knn"]), dataset="db")
    assert "\u202erev" in set(table["alg1"]) | set(table["alg2"])


def test_group_labels_one_apart_by_an_invisible_character_are_refused():
    data = _wide(["svm", "rf"]).assign(family=["A", "A", "A\u200b", "A\u200b", "B", "B"])
    with pytest.raises(ValueError, match=r"group labels 'A' and 'A\\u200b'"):
        bbt.fit(data, dataset="db", group="family", iter_sampling=100)


@pytest.mark.parametrize(
    "name",
    [
        "\U0001f469\u200d\U0001f52c",  # woman scientist: an emoji sequence
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, a non-joiner inside a word
    ],
)
def test_joiners_that_shape_a_name_are_kept(name):
    assert clean_name(name) == name
