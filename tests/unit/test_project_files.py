"""The files a user or a packager looks for beside the code: licence, changelog, citation."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_licence_file_matches_the_licence_pyproject_declares() -> None:
    # (tomllib is Python 3.11+; the package supports 3.10)
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert re.search(r'^license = \{ text = "MIT" \}$', pyproject, re.M)
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_changelog_follows_keep_a_changelog() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog") and "## [Unreleased]" in text
    assert "keepachangelog.com" in text


def test_citation_file_names_the_software_and_the_method_paper() -> None:
    text = (REPO / "CITATION.cff").read_text(encoding="utf-8")
    fields = dict(
        line.split(": ", 1)
        for line in text.splitlines()
        if line and not line.startswith(" ") and ": " in line
    )
    assert fields["cff-version"] == "1.2.0"
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"$', pyproject, re.M).group(1)
    assert fields["version"] == version
    assert "arXiv:2208.04935" in text and "Wainer" in text
