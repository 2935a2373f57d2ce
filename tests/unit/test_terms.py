"""One text per idea (core/terms.py): the widget's glossary and the tooltips of its controls
quote the same entries, sent through ``options.as_dict()``; each entry says what the code
does and cites the paper's section that defines it."""

from __future__ import annotations

import pandas as pd

from bbt_widget.core import options
from bbt_widget.core.terms import CONTROL_TERMS, COST_TEXT, TERMS, TIE_RULES, control_help
from bbt_widget.core.wintable import apply_ties
from bbt_widget.outputs.methods_text import _TIES
from bbt_widget.widget.pair_panel import tie_arithmetic


def test_glossary_and_tooltips_quote_the_same_entry() -> None:
    sent = options.as_dict()
    glossary = {key: (name, text, section) for key, name, text, section in sent["terms"]}
    assert glossary == {key: (t.name, t.text, t.section) for key, t in TERMS.items()}
    assert set(sent["control_help"]) == set(CONTROL_TERMS)
    for trait, keys in CONTROL_TERMS.items():
        tooltip = sent["control_help"][trait]
        assert tooltip == control_help(trait)
        for key in keys:
            name, text, section = glossary[key]
            # the glossary's words and section, not a paraphrase with another section
            assert f"{name}: {text.removesuffix('.')} (paper {section})." in tooltip, trait
    assert control_help("d_min") == ""  # not a term: the front end's own tooltip


def test_what_a_change_costs_names_no_engine_it_may_not_use() -> None:
    # fits come from the numpy sampler by default: "a new Stan fit" was wrong
    assert "Stan" not in COST_TEXT["fit"] and "refit" in COST_TEXT["fit"]
    assert "no refit" in COST_TEXT["view"]
    assert options.as_dict()["cost"] == dict(COST_TEXT)
    assert control_help("ties").endswith(COST_TEXT["fit"].capitalize() + ".")
    assert control_help("hdi").endswith(COST_TEXT["view"].capitalize() + ".")


def test_spread_is_said_as_the_code_counts_it() -> None:
    # 3 ties: spread gives each side 2 (half, rounded up), as the ties entry says
    table = pd.DataFrame({"alg1": ["a"], "alg2": ["b"], "win1": [4], "win2": [1], "ties": [3]})
    spread = apply_ties(table, "spread")
    assert (int(spread["win1"][0]), int(spread["win2"][0])) == (6, 3)
    assert "spread = half of the ties to each side, rounded up" in TERMS["ties"].text
    assert "half a win" not in TERMS["ties"].text
    # the report's methods paragraph says it the same way: half of the ties, not of each tie
    # ("half a win per tie, rounded up" would be a whole win per tie, the add policy)
    assert "half of the ties, rounded up" in _TIES["spread"]
    assert "half a win" not in _TIES["spread"]


def test_sections_are_the_papers() -> None:
    # ties: the policies are defined in Sec. 6.2; the ROPE in Sec. 2.3.1, used in Sec. 5.5
    # (Sec. 9 is the discussion)
    assert TERMS["ties"].section == "Sec. 6.2"
    assert TERMS["rope"].section == "Sec. 2.3.1 and 5.5"


def test_each_tie_policy_is_said_in_one_text() -> None:
    # the ties entry (glossary and tooltip) and the pair panel's arithmetic quote TIE_RULES
    assert set(TIE_RULES) == set(options.TIE_POLICIES)
    for policy, rule in TIE_RULES.items():
        assert f"{policy} = {rule}" in TERMS["ties"].text
        assert f"{policy} = {rule}" in control_help("ties")
        assert (
            f"Tie policy {policy} (Sec. 6.2) = {rule}: "
            in tie_arithmetic(policy, {"a": 2, "b": 1, "ties": 3})["text"]
        )
