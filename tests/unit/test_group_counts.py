"""Data sets in groups: the checks of ``group=`` before any fit, and each group's win table
counted with the fit's rules from its data sets only (counts worked out by hand)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.data import tidy_results
from bbt_widget.core.groups import assign_groups, check_group_request, results_only

SPREAD = {"d_min": None, "paired": True, "ties": "spread", "tie_threshold": None}


def results() -> pd.DataFrame:
    """Wide means, one score per data set; A wins d1, d2 and ties B on d3; B wins d4.

    ======  ====  ====  ====  ======
    db      A     B     C     family
    ======  ====  ====  ====  ======
    d1      0.9   0.8   0.7   text
    d2      0.9   0.7   0.8   text
    d3      0.8   0.8   0.9   tab
    d4      0.6   0.9   0.7   tab
    ======  ====  ====  ====  ======
    """
    return pd.DataFrame(
        {
            "db": ["d1", "d2", "d3", "d4"],
            "A": [0.9, 0.9, 0.8, 0.6],
            "B": [0.8, 0.7, 0.8, 0.9],
            "C": [0.7, 0.8, 0.9, 0.7],
            "family": ["text", "text", "tab", "tab"],
        }
    )


def grouping(data: pd.DataFrame, group: object, counting: dict[str, object] = SPREAD):  # type: ignore[no-untyped-def]
    tidy = tidy_results(results_only(data, group), dataset="db")  # type: ignore[arg-type]
    return assign_groups(tidy, data, group, dataset="db", counting=counting)  # type: ignore[arg-type]


def counts(table: pd.DataFrame) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {
        (a, b): (int(w1), int(w2), int(t))
        for a, b, w1, w2, t in table[["alg1", "alg2", "win1", "win2", "ties"]].itertuples(
            index=False
        )
    }


def test_group_tables_count_each_group_data_sets_only() -> None:
    g = grouping(results(), "family", {**SPREAD, "ties": None})
    assert g.groups == ("text", "tab")
    assert g.datasets == {"text": ["d1", "d2"], "tab": ["d3", "d4"]}
    # text: A beats B twice and C twice; B beats C on d1, C beats B on d2
    assert counts(g.tables["text"]) == {
        ("A", "B"): (2, 0, 0),
        ("A", "C"): (2, 0, 0),
        ("B", "C"): (1, 1, 0),
    }
    # tab: A ties B on d3 and loses d4; C beats A on both; B and C win one each
    assert counts(g.tables["tab"]) == {
        ("A", "B"): (0, 1, 1),
        ("A", "C"): (0, 2, 0),
        ("B", "C"): (1, 1, 0),
    }


def test_group_tables_apply_the_tie_policy_and_add_up_to_the_pooled_counts() -> None:
    data = results()
    g = grouping(data, "family")
    # spread: the tie of A and B on d3 gives one win to each side
    assert counts(g.tables["tab"])[("A", "B")] == (1, 2, 0)
    pooled = bbt.win_table(data.drop(columns="family"), dataset="db", ties=None)
    raw = {k: np.zeros(3, int) for k in counts(pooled)}
    for t in grouping(data, "family", {**SPREAD, "ties": None}).tables.values():
        for k, v in counts(t).items():
            raw[k] += v
    assert {k: tuple(v) for k, v in raw.items()} == counts(pooled)


def test_group_tables_use_the_tie_threshold() -> None:
    # 0.15 makes every difference of 0.1 a tie: on text only A vs B on d2 (0.2) and A vs C
    # on d1 (0.2) stay wins
    g = grouping(results(), "family", {**SPREAD, "ties": None, "tie_threshold": 0.15})
    assert counts(g.tables["text"]) == {
        ("A", "B"): (1, 0, 1),
        ("A", "C"): (1, 0, 1),
        ("B", "C"): (0, 0, 2),
    }


def test_stan_rows_stack_the_groups_pairs_with_games() -> None:
    g = grouping(results(), "family")
    d = g.stan_data
    assert d["n_groups"] == 2 and d["n_pairs"] == 6
    assert d["group"] == [1, 1, 1, 2, 2, 2]
    assert d["i1"] == [1, 1, 2, 1, 1, 2] and d["i2"] == [2, 3, 3, 2, 3, 3]
    assert d["win1"] == [2, 2, 1, 1, 0, 1] and d["win2"] == [0, 0, 1, 2, 2, 1]


def test_a_mapping_gives_the_groups_with_names_cleaned() -> None:
    data = results().drop(columns="family")
    g = grouping(data, {" d1": "x", "d2": "x", "d3": "y", "d4": "y"})
    assert g.datasets == {"x": ["d1", "d2"], "y": ["d3", "d4"]}


def test_group_labels_are_cleaned_as_names_are() -> None:
    # the rule of algorithm and data-set names: surrounding whitespace removed, Unicode NFC
    data = results().assign(family=[" text", " text", "cafe\u0301", "cafe\u0301"])
    assert grouping(data, "family").groups == ("text", "caf\u00e9")
    mapping = {"d1": "x ", "d2": "x ", "d3": 2, "d4": 2}
    assert grouping(data.drop(columns="family"), mapping).datasets == {
        "x": ["d1", "d2"],
        "2": ["d3", "d4"],
    }


#: Two labels that print as one group: whitespace, Unicode form, a number and its text.
CLASHES = [
    ("text", "text ", r"'text' and 'text '"),
    ("caf\u00e9", "cafe\u0301", r"'caf\\xe9' and 'cafe\\u0301'"),
    (1, "1", r"int 1 and '1'"),
]


@pytest.mark.parametrize(("a", "b", "shown"), CLASHES, ids=["space", "nfd", "type"])
@pytest.mark.parametrize("kind", ["column", "mapping"])
def test_labels_that_are_one_group_only_once_cleaned_are_refused(
    a: object, b: object, shown: str, kind: str
) -> None:
    labels = [a, b, "tab", "tab"]
    data = results().drop(columns="family")
    if kind == "column":
        spec: object = "family"
        data = data.assign(family=pd.Series(labels, dtype=object))
        where = "column 'family'"
    else:
        spec = dict(zip(data["db"], labels, strict=True))
        where = "the group mapping"
    with pytest.raises(ValueError, match=rf"group labels {shown} in {where} are one group") as e:
        grouping(data, spec)
    assert "write it one way" in str(e.value) and "rename one" in str(e.value)


@pytest.mark.parametrize(
    ("label", "match"),
    [
        ("", r"the group name '' of data set 'd3' in the group mapping is blank; give 'd3'"),
        ("  ", r"the group name '  ' of data set 'd3' in the group mapping is blank"),
        (None, r"data set 'd3' has no group in the group mapping \(it is None\)"),
        (np.nan, r"data set 'd3' has no group in the group mapping \(it is nan\)"),
    ],
    ids=["empty", "blank", "none", "nan"],
)
def test_a_missing_or_blank_label_in_a_mapping_names_its_data_set(
    label: object, match: str
) -> None:
    mapping = {"d1": "x", "d2": "x", "d3": label, "d4": "y"}
    with pytest.raises(ValueError, match=match):
        grouping(results().drop(columns="family"), mapping)


def test_a_blank_label_in_a_column_names_its_data_set() -> None:
    data = results().assign(family=["text", "text", "", "tab"])
    with pytest.raises(ValueError, match=r"group name '' of data set 'd3' in column 'family'"):
        grouping(data, "family")


def test_mapping_keys_that_are_one_data_set_cannot_give_it_two_groups() -> None:
    # "d3" and "d3 " are one data set, as in the results: not the last key silently
    mapping = {"d1": "x", "d2": "x", "d3": "y", "d3 ": "x", "d4": "y"}
    with pytest.raises(ValueError, match=r"data set 'd3' is in several groups in the group"):
        grouping(results().drop(columns="family"), mapping)


def test_unknown_group_column_is_named() -> None:
    with pytest.raises(
        ValueError, match=r"group='kind' is not a column.*columns: db, A, B, C\); pass"
    ):
        grouping(results().drop(columns="family"), "kind")


def test_dataset_without_group() -> None:
    data = results()
    data["family"] = data["family"].astype(object)
    data.loc[3, "family"] = None
    with pytest.raises(
        ValueError, match=r"column 'family' has no group for row 3 \(data set 'd4'\)"
    ):
        grouping(data, "family")
    with pytest.raises(ValueError, match=r"data sets with no group in the group mapping: 'd4'"):
        grouping(results().drop(columns="family"), {"d1": "x", "d2": "x", "d3": "y"})


def test_dataset_in_several_groups() -> None:
    data = pd.concat([results(), results().iloc[[0]].assign(family="tab")], ignore_index=True)
    data["fold"] = [0, 0, 0, 0, 1]
    tidy = tidy_results(results_only(data, "family"), dataset="db", fold="fold")
    with pytest.raises(ValueError, match=r"data set 'd1' is in several groups in column "):
        assign_groups(tidy, data, "family", dataset="db", counting=SPREAD)


def test_a_single_group_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"every data set is in one group \('all'\).*without group="
    ):
        grouping(results().assign(family="all"), "family")


def test_a_group_with_fewer_than_two_algorithms() -> None:
    # only A has results on the 'tab' data sets: no comparison is left there
    data = results()
    data.loc[[2, 3], ["B", "C"]] = np.nan
    with pytest.raises(ValueError, match=r"group 'tab' of column 'family' has no data set where 2"):
        grouping(data, "family")


def test_a_group_whose_games_are_all_dropped() -> None:
    data = results()
    data.loc[[2, 3], ["A", "B", "C"]] = [[0.8, 0.8, 0.8], [0.7, 0.7, 0.7]]
    counting = {**SPREAD, "ties": "forget"}
    with pytest.raises(ValueError, match=r"group 'tab' of column 'family' has no games"):
        grouping(data, "family", counting)


def test_fit_refuses_bad_requests_before_reading() -> None:
    with pytest.raises(ValueError, match=r"no tie parameter; use ties='spread'"):
        bbt.fit(results(), dataset="db", group="family", ties="davidson")
    table = pd.DataFrame({"alg1": ["A"], "alg2": ["B"], "win1": [3], "win2": [1]})
    with pytest.raises(ValueError, match=r"ready win table has no data sets"):
        bbt.fit(table, group={"d1": "x"})
    with pytest.raises(ValueError, match=r"group must name a column"):
        check_group_request(3, "spread", results())


def test_fit_checks_groups_before_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    from bbt_widget import engines

    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("sampled")

    monkeypatch.setattr(engines, "sample", no_fit)
    with pytest.raises(ValueError, match=r"every data set is in one group \('all'\)"):
        bbt.fit(results().assign(family="all"), dataset="db", group="family")


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--group", "kind"], "--group 'kind' is not a column of the results"),
        (["--group", "family", "--ties", "davidson"], "no tie parameter"),
        (
            ["--group", "kind", "--score", "A", "--score", "B"],
            "--group 'kind' is not a column of the results",
        ),
    ],
)
def test_cli_group_errors_before_any_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    from bbt_widget import cli

    path = tmp_path / "fam.csv"
    results().to_csv(path, index=False)
    code = cli.main(["report", str(path), "--dataset", "db", "-o", str(tmp_path / "r.md"), *option])
    assert code == cli.EXIT_INPUT
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()


def test_fit_warns_when_only_the_group_parameters_fail_to_converge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The diagnostics judge tau and the group abilities too: draws whose beta and sigma mix
    well while the two chains of tau disagree give a DiagnosticsWarning naming R-hat."""
    from bbt_widget import engines
    from bbt_widget.core.draws import Draws

    rng = np.random.default_rng(0)
    chains, n, k, groups = 2, 400, 3, 2

    def fake_sample(model: str, data: dict[str, object], **kwargs: object) -> Draws:
        assert model == "bbt_groups"
        rows = int(data["n_pairs"])  # type: ignore[call-overload]
        tau = np.stack([rng.normal(0.2, 0.01, n), rng.normal(2.0, 0.01, n)])
        params = {
            "beta": rng.normal(size=(chains, n, k)),
            "sigma": rng.gamma(4.0, 0.25, (chains, n)),
            "tau": tau,
            "beta_group": rng.normal(size=(chains, n, k * groups)),
            "win1_rep": rng.integers(0, 3, (chains, n, rows)),
            "log_lik": rng.normal(size=(chains, n, rows)),
        }
        sampler = {
            "divergent__": np.zeros((chains, n)),
            "treedepth__": np.full((chains, n), 3),
            "energy__": rng.normal(size=(chains, n)),
        }
        return Draws(params, sampler, "pystan")

    monkeypatch.setattr(engines, "sample", fake_sample)
    with pytest.warns(bbt.DiagnosticsWarning, match="R-hat"):
        result = bbt.fit(results(), dataset="db", group="family", engine="pystan")
    assert isinstance(result, bbt.GroupedBBTResult)
    assert result.settings["model"] == "bbt_groups" and result.settings["tau_scale"] == 0.5
