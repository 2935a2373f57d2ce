"""Shared fixtures: the real results shipped with the package (no Stan, no network), and
pdflatex for the LaTeX outputs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from bbt_widget import datasets

#: Folders whose every test carries the folder's marker, so that the fast lane
#: (``pytest -m "not slow and not stan and not browser"``) needs no marker in each file.
_FOLDER_MARKERS = {"stan": "stan", "browser": "browser"}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        try:
            folder = Path(item.path).relative_to(here).parts[0]
        except ValueError:
            continue
        marker = _FOLDER_MARKERS.get(folder)
        if marker is not None and item.get_closest_marker(marker) is None:
            item.add_marker(getattr(pytest.mark, marker))


@pytest.fixture(scope="session")
def _pmlb16_once() -> pd.DataFrame:
    return datasets.load_pmlb16()


@pytest.fixture(scope="session")
def _base_once() -> pd.DataFrame:
    return datasets.load_base()


@pytest.fixture
def pmlb16(_pmlb16_once: pd.DataFrame) -> pd.DataFrame:
    """All 16 classifiers x 132 PMLB data sets, one row per (data set, fold); ``db`` names
    the data set. A fresh copy per test, so a test may modify it."""
    return _pmlb16_once.copy()


@pytest.fixture
def base(_base_once: pd.DataFrame) -> pd.DataFrame:
    """The paper's base results (``datasets.load_base()``): columns ``db, dt, lda, lgbm,
    xgb, svm``, 4 fold rows for each of 20 data sets. A fresh copy per test."""
    return _base_once.copy()


@pytest.fixture
def base_means(base: pd.DataFrame) -> pd.DataFrame:
    """The base results averaged over folds (the paper's Table 2): one row per data set,
    data-set names in the index."""
    return base.groupby("db", sort=False).mean()


@pytest.fixture
def two_groups() -> pd.DataFrame:
    """Results whose algorithms form two groups that never met: x and y on d0-d3, z and w on
    d4-d7 (one score per data set; 16 missing results)."""
    nan = float("nan")
    return pd.DataFrame(
        {
            "db": [f"d{i}" for i in range(8)],
            "x": [0.8, 0.7, 0.9, 0.6, nan, nan, nan, nan],
            "y": [0.7, 0.9, 0.8, 0.5, nan, nan, nan, nan],
            "z": [nan, nan, nan, nan, 0.6, 0.5, 0.7, 0.8],
            "w": [nan, nan, nan, nan, 0.7, 0.4, 0.6, 0.9],
        }
    )


def has_siunitx() -> bool:
    """Whether the TeX installation has siunitx (Debian's texlive-science)."""
    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich is None:
        return False
    found = subprocess.run([kpsewhich, "siunitx.sty"], capture_output=True, text=True)
    return bool(found.stdout.strip())


@pytest.fixture
def siunitx_installed() -> bool:
    """Whether the TeX installation has siunitx (see :func:`has_siunitx`)."""
    return has_siunitx()


@pytest.fixture
def compile_latex() -> Callable[[Path], str]:
    """Compile a complete .tex file as it stands with pdflatex (twice, so longtables settle
    their widths) and return the log; skips where pdflatex is missing, or siunitx for a file
    that loads it outright (the report loads it only where it is installed), except under
    CI (which installs texlive-latex-base, texlive-latex-recommended and texlive-science)."""
    exe = shutil.which("pdflatex")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing (CI installs texlive-latex-base)")
        pytest.skip("pdflatex is not installed")

    def run(path: Path) -> str:
        text = path.read_text(encoding="utf-8", errors="replace")
        if re.search(r"^\\usepackage\{[^}]*siunitx", text, flags=re.M) and not has_siunitx():
            if os.environ.get("CI"):
                pytest.fail("siunitx is missing (CI installs texlive-science)")
            pytest.skip("siunitx is not installed (Debian's texlive-science)")
        for _ in range(2):
            proc = subprocess.run(
                [exe, "-interaction=nonstopmode", "-halt-on-error", path.name],
                cwd=path.parent,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=300,
            )
            log = path.with_suffix(".log").read_text(errors="replace")
            assert proc.returncode == 0, log[-3000:]
        assert path.with_suffix(".pdf").stat().st_size > 10_000
        return log

    return run
