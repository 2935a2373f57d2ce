"""The command line without Stan: options checked before any fit, help, version, layouts,
progress and terminal formatting. Fits the command runs for real are in tests/stan."""

from __future__ import annotations

import argparse
import io
import math
import time
from pathlib import Path

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.fitting import fit
from bbt_widget.outputs.report._methods import check_methods


@pytest.fixture
def no_fit(monkeypatch):
    """Any call of fit fails the test: what is checked here must be checked before it."""

    def refuse(*args, **kwargs):
        raise AssertionError("the fit started although an option was invalid")

    monkeypatch.setattr(bbt, "fit", refuse)


@pytest.fixture
def base_csv(tmp_path: Path, base: pd.DataFrame) -> Path:
    path = tmp_path / "base.csv"
    base.to_csv(path, index=False)
    return path


@pytest.fixture
def long_csv(tmp_path: Path, base: pd.DataFrame) -> Path:
    """The base results in long form: db, fold, algorithm, acc."""
    wide = base.assign(fold=base.groupby("db").cumcount())
    long = wide.melt(id_vars=["db", "fold"], var_name="algorithm", value_name="acc")
    path = tmp_path / "long.csv"
    long.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--rope", "0.6", "0.4"], "--rope 0.6 0.4: rope low must be below rope high"),
        (["--rope", "0.4", "1.5"], "--rope 0.4 1.5: rope bounds are probabilities"),
        (["--hdi", "89"], "--hdi 89: the HDI mass is a probability between 0 and 1; did you "),
        (["--hdi", "0"], "e.g. 0.89"),
        (["--control", "nosuch"], "--control: 'nosuch' is not an algorithm"),
        (["--highlight", "svm", "--highlight", "nosuch"], "--highlight: 'nosuch' is not an"),
        (["--d-min", "-1"], "--d-min must be a finite number >= 0"),
        (["--chains", "0"], "--chains must be an integer >= 1"),
        (["--iter-sampling", "0"], "--iter-sampling must be an integer >= 4"),
        (["--iter-sampling", "1"], "--iter-sampling must be at least 4, got 1"),
        (["--prior-scale", "0"], "--prior-scale must be a number from 1e-06 to 1e+06"),
        (["--prior-scale", "1e-300"], "--prior-scale must be a number from 1e-06 to 1e+06"),
        (["--prior-scale", "1e-100"], "got 1e-100: outside that range the sampler's arithmetic"),
        (["--prior-scale", "1e7"], "--prior-scale must be a number from 1e-06 to 1e+06"),
        (["--seed", "-3"], "seed must be an integer in [0, 2**31)"),
        (["--adapt-delta", "1.5"], "--adapt-delta"),
        (["--max-treedepth", "0"], "--max-treedepth"),
    ],
)
def test_options_are_checked_before_the_fit(base_csv, tmp_path, capsys, no_fit, option, message):
    code = cli.main(["report", str(base_csv), "-o", str(tmp_path / "r.html"), *option])
    assert code == cli.EXIT_INPUT
    assert message in capsys.readouterr().err


def test_paired_mode_is_checked_against_the_data_before_the_fit(tmp_path, capsys, no_fit):
    # one result per data set (no folds): a local ROPE has no spread to work with
    means = pd.DataFrame({"db": ["a", "b", "c"], "x": [0.8, 0.7, 0.9], "y": [0.7, 0.9, 0.6]})
    path = tmp_path / "means.csv"
    means.to_csv(path, index=False)
    code = cli.main(["report", str(path), "-o", str(tmp_path / "r.html"), "--d-min", "0.4"])
    assert code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "bbt-widget: error:" in err and "d_min" not in err


@pytest.fixture
def one_dataset_csv(tmp_path: Path, base: pd.DataFrame) -> Path:
    """The four folds of one data set of the base results."""
    path = tmp_path / "one.csv"
    base[base["db"] == base["db"].iloc[0]].to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("option", "message"),
    [
        # each failed only after the BBT fit (and the sweep's fits)
        (["--robustness"], "--robustness leaves each data set out in turn and needs at least 2"),
        (["--with", "plackett-luce"], "--with plackett-luce needs at least 2 data sets where"),
    ],
)
def test_methods_that_need_more_data_sets_fail_before_the_fit(
    one_dataset_csv, tmp_path, capsys, no_fit, option, message
):
    code = cli.main(["report", str(one_dataset_csv), "-o", str(tmp_path / "r.html"), *option])
    assert code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert message in err and "these results have 1" in err


def test_hierarchical_pairs_without_enough_data_sets_fail_before_the_fit(
    one_dataset_csv, tmp_path, capsys, no_fit
):
    # it failed after the BBT fit (and the Plackett-Luce fit), at the first pair's check
    args = ["report", str(one_dataset_csv), "-o", str(tmp_path / "r.md")]
    assert cli.main([*args, "--with", "hierarchical", "--rho", "0.25"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "--with hierarchical: the hierarchical test of" in err
    assert "needs at least 2 data sets with 2 or more common folds; found 1" in err


def test_default_ranking_model_is_left_out_where_it_cannot_run(one_dataset_csv, base_csv):
    from bbt_widget.outputs.report._methods import check_methods

    for path, expected in ((one_dataset_csv, []), (base_csv, ["plackett-luce"])):
        df = cli.read_results(str(path))
        assert check_methods(df, {"dataset": "db"}, path="r.html") == expected


def test_rho_without_the_hierarchical_test_is_refused(base_csv, tmp_path, capsys, no_fit):
    # it was accepted and ignored
    # (the defaults left out: on these small fold results they run the test)
    args = ["report", str(base_csv), "-o", str(tmp_path / "r.md"), "--rho", "0.25"]
    args += ["--with", "none,friedman"]
    assert cli.main(args) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "--rho 0.25 is used only by the hierarchical t-test" in err
    assert "add --with hierarchical or leave --rho out" in err


def test_long_form_guesses_the_dataset_column(long_csv, tmp_path, capsys, monkeypatch):
    seen = {}

    def record(data, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt  # stop before sampling; the command reports an interrupt

    monkeypatch.setattr(bbt, "fit", record)
    args = ["report", str(long_csv), "-o", str(tmp_path / "r.html")]
    code = cli.main([*args, "--algorithm", "algorithm", "--score", "acc", "--fold", "fold"])
    assert code == 130
    assert seen["dataset"] == "db"
    assert "using column 'db' as the data-set names" in capsys.readouterr().err


def test_long_form_without_a_dataset_column_fails_before_the_fit(
    long_csv, tmp_path, capsys, no_fit
):
    # the data-set names are numbers here, so no column can be guessed
    long = pd.read_csv(long_csv)
    long["db"] = long["db"].astype("category").cat.codes
    long.to_csv(long_csv, index=False)
    args = ["report", str(long_csv), "-o", str(tmp_path / "r.html"), "--algorithm", "algorithm"]
    code = cli.main([*args, "--score", "acc", "--fold", "fold"])
    assert code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "nothing to fit" in err and "--dataset" in err


def test_error_messages_name_the_command_options(long_csv, tmp_path, capsys, no_fit):
    code = cli.main(["report", str(long_csv), "-o", str(tmp_path / "r.html"), "--score", "acc"])
    assert code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "--algorithm" in err and "algorithm=" not in err
    # folds in long form without --fold: the message asks for --fold, not fold=
    args = ["report", str(long_csv), "-o", str(tmp_path / "r.html"), "--dataset", "db"]
    assert cli.main([*args, "--algorithm", "algorithm", "--score", "acc"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "pass --fold '<column numbering the folds>'" in err and "fold=" not in err


def test_as_options_keeps_prose_and_maps_keywords():
    assert cli._as_options("algorithm 'x' is unknown") == "algorithm 'x' is unknown"
    assert cli._as_options("pass dataset='db'.") == "pass --dataset 'db'."
    assert cli._as_options("need algorithm= and score=; score= is missing") == (
        "need --algorithm and --score; --score is missing"
    )
    assert cli._as_options("use paired=False or d_min=None") == "use --unpaired or no --d-min"


def test_help_documents_every_option_with_its_default(capsys):
    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        for action in command._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"
    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for shown in (
        "(default: spread)",
        "(default: lognormal)",
        "Appendix A: lognormal 0.5, cauchy 1, normal 3)",
        "(default: 0.8)",
        "(default: 10)",
        "(default: the engine's, 1000)",
        "(default: 4)",
        f"(default: {bbt.DEFAULT_SEED})",
        "(default: [0.45, 0.55])",
        "(default: 0.89)",
        "(default: auto)",
        "(default: report.html)",
    ):
        assert shown in text


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith(f"bbt-widget {bbt.__version__} (")


def test_one_default_seed_for_fit_widget_and_command():
    import inspect

    from bbt_widget.widget.app import BBTWidget

    assert inspect.signature(fit).parameters["seed"].default == bbt.DEFAULT_SEED
    assert inspect.signature(BBTWidget).parameters["seed"].default == bbt.DEFAULT_SEED
    args = cli._parser().parse_args(["report", "r.csv"])
    assert args.seed == bbt.DEFAULT_SEED
    assert cli._reproduce(["report", "r.csv", "--d-min", "0.4"], args) == (
        f"bbt-widget report r.csv --d-min 0.4 --seed {bbt.DEFAULT_SEED}"
    )
    # a name with spaces is quoted so that the line can be pasted into a shell
    assert "'my results.csv'" in cli._reproduce(["report", "my results.csv"], args)


def test_terminal_tables_use_fixed_point():
    frame = pd.DataFrame({"algorithm": ["a", "b"], "p_best": [0.5, 0.00001], "rank": [1.0, 2.0]})
    text = cli._fixed(frame)
    assert "e-" not in text and "0.50" in text and "0.00" in text


def test_compile_progress_shows_elapsed_seconds():
    stream = io.StringIO()  # not a terminal: one line per update
    progress = cli._Progress(stream)
    progress.every = 0.05
    progress("compiling", math.nan)
    time.sleep(0.6)  # a stage over half a second reports its time in a log too
    progress("sampling", 0.0)
    progress("sampling", 1.0)
    progress.done("fitted in 1.0 s")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "compiling (first run on this machine, then cached)..."
    assert sum(line.startswith("compiling the Stan model... ") for line in lines) >= 2
    assert any(line.startswith("compiling: done in ") for line in lines)
    assert lines[-1] == "fitted in 1.0 s"
    time.sleep(0.15)  # the ticker stopped with the stage
    assert stream.getvalue().splitlines()[-1] == "fitted in 1.0 s"


def test_calibrate_checks_its_options_before_any_fit(base_csv, tmp_path, capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the calibration started although an option was invalid")

    monkeypatch.setattr(bbt, "calibration", refuse)
    args = ["calibrate", str(base_csv)]
    assert cli.main([*args, "-o", str(tmp_path / "c.txt")]) == cli.EXIT_INPUT
    assert "the chart must end in .svg, .png or .pdf" in capsys.readouterr().err
    assert cli.main([*args, "-o", str(tmp_path)]) == cli.EXIT_INPUT
    assert "is a folder" in capsys.readouterr().err
    assert cli.main([*args, "-o", str(tmp_path / "c.svg"), "--repeats", "0"]) == cli.EXIT_INPUT
    assert "--repeats must be an integer >= 1" in capsys.readouterr().err
    assert cli.main([*args, "-o", str(tmp_path / "c.svg"), "--d-min", "-1"]) == cli.EXIT_INPUT
    assert "--d-min must be" in capsys.readouterr().err


@pytest.mark.parametrize("scheduler", ["bogus", "local", "tcp://host"])
def test_calibrate_refuses_a_scheduler_that_is_not_an_address(
    base_csv, tmp_path, capsys, monkeypatch, scheduler
):
    # distributed's "missing port number in address" named neither --scheduler nor the fix
    monkeypatch.setattr(cli, "read_results", lambda *a, **k: pytest.fail("data read"))
    args = ["calibrate", str(base_csv), "-o", str(tmp_path / "c.svg"), "--scheduler", scheduler]
    assert cli.main(args) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert f"--scheduler {scheduler!r} is not a Dask scheduler address" in err
    assert "tcp://host:8786" in err and "leave --scheduler out" in err


def test_calibrate_names_the_options_when_the_data_are_too_small(base_csv, tmp_path, capsys):
    # 20 data sets cannot give 20 for training and 10 for testing; refused before any fit
    assert cli.main(["calibrate", str(base_csv), "-o", str(tmp_path / "c.svg")]) == 2
    err = capsys.readouterr().err
    assert "--n-train + --n-test = 30 data sets are needed, but the results have 20" in err


def test_family_default_scale_and_nuts_options_reach_fit(base_csv, tmp_path, monkeypatch):
    seen = {}

    def record(data, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt  # stop before sampling

    monkeypatch.setattr(bbt, "fit", record)
    args = ["report", str(base_csv), "-o", str(tmp_path / "r.html"), "--hyperprior", "cauchy"]
    assert cli.main([*args, "--adapt-delta", "0.95", "--max-treedepth", "12"]) == 130
    # no --prior-scale: fit picks the family's Appendix A default
    assert seen["hyperprior"] == "cauchy" and seen["prior_scale"] is None
    assert seen["adapt_delta"] == 0.95 and seen["max_treedepth"] == 12


def test_long_form_read_as_wide_suggests_the_exact_options(long_csv, tmp_path, capsys, no_fit):
    # it said only "column 'algorithm' must hold numbers, but row 0 is ..."
    code = cli.main(["report", str(long_csv), "-o", str(tmp_path / "r.html")])
    assert code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "these results look like long form" in err
    command = err.split("read them with: ", 1)[1].strip()
    assert command == (
        f"bbt-widget report {long_csv} --dataset db --algorithm algorithm --score acc --fold fold"
    )
    # the options suggested read the file: the same win table as the wide original
    args = cli._parser().parse_args(command.split()[1:])
    df = cli.read_results(str(long_csv))
    assert sorted(cli._check_before_fit(df, args, "db")[1]) == ["dt", "lda", "lgbm", "svm", "xgb"]


@pytest.mark.parametrize(
    ("n_alg", "rho", "expected"),
    [
        (5, 0.25, ["hierarchical", "plackett-luce"]),  # 10 pairs x 132 data sets: on
        (6, 0.25, None),  # 15 pairs x 132: over PAIRWISE_DEFAULT_MAX, so --rho is refused
        (4, None, ["plackett-luce"]),  # rho unknown: the test cannot run
    ],
)
def test_report_runs_the_pairwise_tests_by_default_on_small_data(n_alg, rho, expected):
    """Without --with, a report of fold results, in every format, adds the hierarchical
    t-test when --rho is given and pairs x data sets is at most PAIRWISE_DEFAULT_MAX; a --rho
    that no test would use is refused rather than ignored (bbt.report.write checks the
    same)."""
    data = bbt.datasets.load_pmlb16()
    data = data[["db", *data.columns[1 : 1 + n_alg]]]
    layout = {"dataset": "db", "algorithm": None, "fold": None, "score": None}
    for out in (Path("r.html"), Path("r.md"), Path("r.tex")):
        wanted = expected
        if wanted is None:
            with pytest.raises(ValueError, match="used only by the hierarchical t-test"):
                check_methods(data, layout, path=out, rho=rho)
        else:
            assert check_methods(data, layout, path=out, rho=rho) == wanted


def test_report_help_lists_every_exit_code(capsys):
    from bbt_widget.cli_commands.common import EXIT_CODES

    for command in (["report"], ["calibrate"], []):
        with pytest.raises(SystemExit):
            cli.main([*command, "--help"])
        text = " ".join(capsys.readouterr().out.split())  # the help wraps its lines
        assert "exit codes: 0 success; 1 " in text, command
        for code, meaning in EXIT_CODES.items():
            assert f"{code} {' '.join(meaning.split())}" in text, (command, code)
    assert set(EXIT_CODES) == {0, 1, 2, 3, 4, 5, 130, 143}


def test_running_out_of_memory_says_what_ran_out_and_what_to_try(
    base_csv, tmp_path, capsys, monkeypatch
):
    def exhausted(*args, **kwargs):
        raise MemoryError  # what Python raises under ulimit -v: no message at all

    monkeypatch.setattr("bbt_widget.core.data.as_tidy", exhausted)
    code = cli.main(["report", str(base_csv), "-o", str(tmp_path / "r.html"), "-q"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_UNEXPECTED
    assert "bbt-widget: error: out of memory" in err
    assert "fewer algorithms" in err and "--iter-sampling" in err and "ulimit -v" in err
    assert "MemoryError" not in err and "Traceback" not in err
