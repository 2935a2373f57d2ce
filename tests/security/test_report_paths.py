"""Outputs never touch what the package did not write.

* A report replaces its figures and tables folders only when they hold nothing but what an
  earlier report wrote there (the manifest it writes into each, with every file's SHA-256):
  a user's file, an edited table, a folder without the manifest or a tampered manifest is
  refused, naming the folder, before anything is written.
* Nothing is written through a symbolic link: a link where the report, its ``.bib``, a
  folder or a table goes is refused, and the rename replaces a name, never the file a link
  points at (links planted by another user in a shared folder cannot aim a report at a
  victim's file or folder).
* Each report has its own tables folder (``r.html`` -> ``r_html_tables/``): two formats of
  one name never share one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.outputs import export
from bbt_widget.outputs._atomic import (
    MANIFEST,
    OutputConflictError,
    atomic_path,
    atomic_replace_dir,
)
from bbt_widget.outputs.methods_text import figures_folder, tables_folder
from bbt_widget.outputs.report._build import keep_posterior
from bbt_widget.outputs.report._render import write_report

SECRET = "the victim's data\n"


def _fit(data: pd.DataFrame) -> bbt.BBTResult:
    with warnings.catch_warnings():  # short chains: the files, not the numbers, are tested
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        return bbt.fit(
            data, dataset="db", engine="numpy", seed=3, chains=2, iter_warmup=200,
            iter_sampling=200,
        )  # fmt: skip


@pytest.fixture(scope="module")
def res_a() -> bbt.BBTResult:
    return _fit(bbt.datasets.load_base())


@pytest.fixture(scope="module")
def res_b() -> bbt.BBTResult:
    """Other results: one algorithm fewer than A's."""
    return _fit(bbt.datasets.load_base().drop(columns="svm"))


@pytest.fixture(scope="module")
def written(tmp_path_factory, res_a, res_b) -> Path:
    """A folder where ``r.md`` was written from A, then ``r.html`` from A and ``r.md`` again
    from B (replacing the first one's folders): what a user does with one name."""
    folder = tmp_path_factory.mktemp("written")
    write_report(res_a, folder / "r.md")
    write_report(res_a, folder / "r.html")
    write_report(res_b, folder / "r.md")
    return folder


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (hidden ones too): a file's bytes, a link's target."""
    out: dict[str, bytes | str] = {}
    for p in sorted(folder.rglob("*")):
        name = str(p.relative_to(folder))
        if p.is_symlink():
            out[name] = f"-> {os.readlink(p)}"
        elif p.is_file():
            out[name] = p.read_bytes()
    return out


def _victim(tmp_path: Path) -> tuple[Path, Path]:
    """A file and a folder of someone else's, outside the report's folder."""
    home = tmp_path / "victim"
    (home / "folder").mkdir(parents=True)
    (home / "file.txt").write_text(SECRET)
    (home / "folder" / "thesis.tex").write_text(SECRET)
    return home / "file.txt", home / "folder"


def _copy(written: Path, tmp_path: Path) -> Path:
    """The written reports, copied for one test to change."""
    shutil.copytree(written, tmp_path / "out", symlinks=True)
    return tmp_path / "out"


# --------------------------------------------------------------- a user's files in a folder


@pytest.mark.parametrize("fmt", ["html", "md", "tex"])
def test_a_users_file_in_the_tables_folder_is_refused_and_kept(res_a, tmp_path, fmt):
    tables = tables_folder(tmp_path / f"results.{fmt}")
    tables.mkdir()
    (tables / "my_notes.csv").write_text("x\n")
    before = _snapshot(tmp_path)
    with pytest.raises(OutputConflictError) as caught:
        bbt.report.write(res_a, tmp_path / f"results.{fmt}")
    message = str(caught.value)
    assert repr(str(tables)) in message and "'my_notes.csv'" in message
    assert "move them out" in message and "another name" in message
    assert _snapshot(tmp_path) == before  # no report, no temporary file, the note kept


@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_a_users_file_in_the_figures_folder_is_refused_and_kept(res_a, tmp_path, fmt):
    figures = figures_folder(tmp_path / f"r.{fmt}")
    assert figures is not None
    figures.mkdir()
    (figures / "sketch.svg").write_text("<svg>mine</svg>")
    before = _snapshot(tmp_path)
    with pytest.raises(OutputConflictError, match=r"holds files .*'sketch\.svg'"):
        write_report(res_a, tmp_path / f"r.{fmt}")
    assert _snapshot(tmp_path) == before


@pytest.mark.slow
def test_a_report_replaces_the_folders_an_earlier_report_wrote(written, res_b):
    """The second ``r.md`` (B) replaced the first one's folders (A): each holds the new
    files and the manifest listing exactly them."""
    for folder in (tables_folder(written / "r.md"), figures_folder(written / "r.md")):
        assert folder is not None
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = {p.name: p for p in folder.iterdir() if p.name != MANIFEST}
        assert manifest["written_by"] == "bbt-widget" and set(manifest["files"]) == set(files)
        for name, path in files.items():
            assert manifest["files"][name] == hashlib.sha256(path.read_bytes()).hexdigest()
    ranking = pd.read_csv(tables_folder(written / "r.md") / "ranking.csv")
    assert set(ranking["algorithm"]) == set(res_b.algorithms)
    # no temporary or replaced folder is left beside them
    assert not [p.name for p in written.iterdir() if p.name.startswith(".")]


def _tamper_added_name(folder: Path) -> None:
    """A user's file added to the manifest by name, with a made-up hash."""
    (folder / "my_notes.csv").write_text("mine\n")
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    manifest["files"]["my_notes.csv"] = "0" * 64
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _tamper_outside_name(folder: Path) -> None:
    """The manifest lists a file outside the folder (with its true hash)."""
    outside = folder.parent / "victim" / "file.txt"
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    manifest["files"]["../victim/file.txt"] = hashlib.sha256(outside.read_bytes()).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _tamper_linked_manifest(folder: Path) -> None:
    """The manifest is a link to a copy elsewhere."""
    copy = folder.parent / "victim" / "manifest.json"
    shutil.copy(folder / MANIFEST, copy)
    (folder / MANIFEST).unlink()
    (folder / MANIFEST).symlink_to(copy)


def _tamper_linked_file(folder: Path) -> None:
    """A listed table replaced by a link to the victim's file."""
    (folder / "ranking.csv").unlink()
    (folder / "ranking.csv").symlink_to(folder.parent / "victim" / "file.txt")


def _tamper_edited_table(folder: Path) -> None:
    """A table the user edited (and saved) since the report wrote it."""
    with open(folder / "ranking.csv", "a", encoding="utf-8") as fh:
        fh.write("my,extra,row\n")


def _tamper_no_manifest(folder: Path) -> None:
    """The manifest deleted: the folder is as an older version of the package left it."""
    (folder / MANIFEST).unlink()


def _tamper_garbage_manifest(folder: Path) -> None:
    (folder / MANIFEST).write_text('["written_by", "bbt-widget"]', encoding="utf-8")


def _tamper_subfolder(folder: Path) -> None:
    """A folder of the user's inside, under a name the manifest lists."""
    (folder / "ranking.csv").unlink()
    (folder / "ranking.csv").mkdir()
    (folder / "ranking.csv" / "notes.txt").write_text("mine\n")


@pytest.mark.parametrize(
    ("tamper", "said"),
    [
        (_tamper_added_name, "changed since bbt-widget wrote them: 'my_notes.csv'"),
        (_tamper_outside_name, f"its {MANIFEST} was not written by bbt-widget"),
        (_tamper_linked_manifest, f"its {MANIFEST} was not written by bbt-widget"),
        (_tamper_linked_file, "files bbt-widget did not write: 'ranking.csv'"),
        (_tamper_edited_table, "changed since bbt-widget wrote them: 'ranking.csv'"),
        (_tamper_no_manifest, f"it has no {MANIFEST}"),
        (_tamper_garbage_manifest, f"its {MANIFEST} was not written by bbt-widget"),
        (_tamper_subfolder, "files bbt-widget did not write: 'ranking.csv'"),
    ],
)
def test_a_tampered_folder_is_refused_and_left_as_it_is(written, tmp_path, res_a, tamper, said):
    out = _copy(written, tmp_path)
    _victim(out)
    tamper(tables_folder(out / "r.md"))
    before = _snapshot(out)
    with pytest.raises(OutputConflictError, match="r_md_tables") as caught:
        write_report(res_a, out / "r.md")
    assert said in str(caught.value)
    assert _snapshot(out) == before


def test_an_empty_folder_is_replaced(tmp_path):
    """A folder made ahead (mkdir) holds nothing to lose: the report fills it."""
    for name in ("r_md_figures", "r_md_tables"):
        (tmp_path / name).mkdir()
    with atomic_replace_dir(tmp_path / "r_md_tables") as new:
        (new / "claims.csv").write_text("a\n1\n")
    assert sorted(p.name for p in (tmp_path / "r_md_tables").iterdir()) == [
        MANIFEST,
        "claims.csv",
    ]


# --------------------------------------------------------------------------- symbolic links


@pytest.mark.parametrize("fmt", ["html", "md", "tex"])
def test_a_link_where_the_report_goes_is_refused(res_a, tmp_path, fmt):
    victim_file, _ = _victim(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / f"r.{fmt}").symlink_to(victim_file)
    with pytest.raises(OutputConflictError, match=r"is a symbolic link where an output file"):
        bbt.report.write(res_a, shared / f"r.{fmt}")
    assert victim_file.read_text() == SECRET
    assert [p.name for p in shared.iterdir()] == [f"r.{fmt}"]


def test_a_dangling_link_creates_no_file_where_it_points(res_a, tmp_path):
    victim_file, _ = _victim(tmp_path)
    aimed = victim_file.with_name("new.html")  # not there yet: a write would create it
    (tmp_path / "r.html").symlink_to(aimed)
    with pytest.raises(OutputConflictError, match=r"r\.html' is a symbolic link"):
        write_report(res_a, tmp_path / "r.html")
    assert not aimed.exists() and (tmp_path / "r.html").is_symlink()


def test_a_link_where_the_bib_goes_is_refused(res_a, tmp_path):
    victim_file, _ = _victim(tmp_path)
    (tmp_path / "r.bib").symlink_to(victim_file)
    with pytest.raises(OutputConflictError, match=r"r\.bib' is a symbolic link"):
        write_report(res_a, tmp_path / "r.tex")
    assert victim_file.read_text() == SECRET and not (tmp_path / "r.tex").exists()


@pytest.mark.parametrize("which", ["r_md_tables", "r_md_figures"])
def test_a_link_where_a_folder_goes_is_refused(res_a, tmp_path, which):
    _, victim_folder = _victim(tmp_path)
    (tmp_path / which).symlink_to(victim_folder, target_is_directory=True)
    before = _snapshot(tmp_path)
    with pytest.raises(OutputConflictError, match=rf"{which}' is a symbolic link where the"):
        write_report(res_a, tmp_path / "r.md")
    assert _snapshot(tmp_path) == before
    assert (victim_folder / "thesis.tex").read_text() == SECRET


def test_a_link_put_in_place_while_a_file_is_written_is_replaced_not_followed(tmp_path):
    victim_file, _ = _victim(tmp_path)
    path = tmp_path / "r.html"
    with atomic_path(path) as tmp:
        tmp.write_text("the report")
        path.symlink_to(victim_file)  # after the check, before the rename
    assert not path.is_symlink() and path.read_text() == "the report"
    assert victim_file.read_text() == SECRET


def test_a_link_put_in_place_while_a_folder_is_written_is_refused(tmp_path):
    _, victim_folder = _victim(tmp_path)
    folder = tmp_path / "r_md_figures"
    with pytest.raises(OutputConflictError, match="is a symbolic link"):
        with atomic_replace_dir(folder) as new:
            (new / "ranking.svg").write_text("<svg/>")
            folder.symlink_to(victim_folder, target_is_directory=True)
    assert (victim_folder / "thesis.tex").read_text() == SECRET
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r_md_figures", "victim"]


def test_tables_and_exports_refuse_links(res_a, tmp_path):
    victim_file, _ = _victim(tmp_path)
    table = pd.DataFrame({"algorithm": ["a"], "p": [0.5]})
    for suffix in ("csv", "md", "tex"):
        (tmp_path / f"t.{suffix}").symlink_to(victim_file)
        with pytest.raises(OutputConflictError):
            export.save_table(table, tmp_path / f"t.{suffix}")
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "summary.csv").symlink_to(victim_file)
    with pytest.raises(OutputConflictError, match=r"summary\.csv' is a symbolic link"):
        export.export_all(res_a, folder)
    assert [p.name for p in folder.iterdir()] == ["summary.csv"]
    assert victim_file.read_text() == SECRET


def test_the_posterior_kept_in_a_shared_temporary_folder_does_not_follow_a_link(
    res_a, tmp_path, monkeypatch
):
    """A report that fails keeps its fit's draws; where its own folder cannot take them they
    go to the temporary folder, shared by every user: a link planted there under the name
    they get is refused, not followed."""
    import tempfile

    victim_file, _ = _victim(tmp_path)
    shared = tmp_path / "tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    (shared / "r_posterior.npz").symlink_to(victim_file)
    note = keep_posterior(res_a, tmp_path / "elsewhere" / "r.html", beside=False)
    assert note == "the fit's posterior draws could not be saved (no folder could be written)"
    assert victim_file.read_text() == SECRET


# ------------------------------------------------------------------ two formats of one name


def test_two_formats_of_one_name_keep_their_own_tables(written, res_a, res_b):
    html_tables, md_tables = tables_folder(written / "r.html"), tables_folder(written / "r.md")
    assert (html_tables.name, md_tables.name) == ("r_html_tables", "r_md_tables")
    for tables, res in ((html_tables, res_a), (md_tables, res_b)):
        for name in ("ranking.csv", "pairs.csv"):
            frame = pd.read_csv(tables / name)
            algorithms = frame["algorithm"] if "algorithm" in frame else frame["alg_a"]
            assert set(algorithms) <= set(res.algorithms)
        assert set(pd.read_csv(tables / "ranking.csv")["algorithm"]) == set(res.algorithms)
    # each report names its own folder, not the other's
    html, md = ((written / f"r.{f}").read_text(encoding="utf-8") for f in ("html", "md"))
    assert "r_html_tables/" in html and "r_md_tables" not in html
    assert md.replace("\\_", "_").count("r_md_tables/") == 1 and "r_html_tables" not in md
    assert not (written / "r_tables").exists()


# ------------------------------------------------------------------------ the command line


@pytest.fixture
def results_csv(tmp_path) -> Path:
    path = tmp_path / "d.csv"
    bbt.datasets.load_base().to_csv(path, index=False)
    return path


def test_the_command_refuses_a_folder_holding_a_users_file_before_the_fit(
    results_csv, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(bbt, "fit", lambda *a, **k: pytest.fail("fitted"))
    tables = tmp_path / "results_md_tables"
    tables.mkdir()
    (tables / "my_notes.csv").write_text("x\n")
    out = str(tmp_path / "results.md")
    assert cli.main(["report", str(results_csv), "-o", out, "-q"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"bbt-widget: error: -o {out!r}: {str(tables)!r} holds files")
    assert "'my_notes.csv'" in err and (tables / "my_notes.csv").read_text() == "x\n"
    assert not (tmp_path / "results.md").exists()


def test_the_command_refuses_a_link_before_the_fit(results_csv, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bbt, "fit", lambda *a, **k: pytest.fail("fitted"))
    victim_file, _ = _victim(tmp_path)
    (tmp_path / "r.html").symlink_to(victim_file)
    out = str(tmp_path / "r.html")
    assert cli.main(["report", str(results_csv), "-o", out, "-q"]) == cli.EXIT_INPUT
    assert "is a symbolic link where an output file goes" in capsys.readouterr().err
    assert victim_file.read_text() == SECRET


@pytest.mark.slow
def test_the_installed_command_exits_2_with_the_folder_named_and_no_traceback(
    results_csv, tmp_path
):
    (tmp_path / "results_md_tables").mkdir()
    (tmp_path / "results_md_tables" / "my_notes.csv").write_text("x\n")
    proc = subprocess.run(
        [sys.executable, "-m", "bbt_widget", "report", "d.csv", "-o", "results.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "'results_md_tables' holds files bbt-widget may not have written" in proc.stderr
    assert (tmp_path / "results_md_tables" / "my_notes.csv").read_text() == "x\n"
    assert not (tmp_path / "results.md").exists()
