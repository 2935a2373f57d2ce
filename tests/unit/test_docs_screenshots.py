"""The docs' images: every image a page (``docs/**/*.md``, ``README.md``) shows is there and
is a PNG of plausible size, and every screenshot in ``docs/screenshots/`` is one that
``docs/screenshots/take_screenshots.py`` takes (a renamed or dropped shot fails here)."""

from __future__ import annotations

import importlib.util
import re
import struct
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SCREENSHOTS = DOCS / "screenshots"
PAGES = [*sorted(DOCS.rglob("*.md")), REPO / "README.md"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: Markdown images ``![alt](path "title")`` and HTML ``<img src="path">``.
_IMAGE = re.compile(
    r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|<img[^>]+src=\"([^\"]+)\""
)


def _images(page: Path) -> list[Path]:
    """The local images a page shows (links off the site are left to the link checks)."""
    found = []
    for match in _IMAGE.finditer(page.read_text(encoding="utf-8")):
        target = (match.group(1) or match.group(2)).split("#")[0]
        if re.match(r"^[a-z]+:", target):
            continue
        found.append((page.parent / target).resolve())
    return found


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk; ValueError when the file is not a PNG."""
    head = path.read_bytes()[:24]
    if len(head) < 24 or head[:8] != PNG_MAGIC or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG (no PNG signature and IHDR chunk)")
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "take_screenshots", SCREENSHOTS / "take_screenshots.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_the_pages_show_images() -> None:
    shown = [image for page in PAGES for image in _images(page)]
    assert len(shown) >= 5, shown  # the widget page's screenshots at least


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_image_shown_is_a_png_of_plausible_size(page: Path) -> None:
    for image in _images(page):
        assert image.is_file(), f"{page.name} shows {image}, which does not exist"
        width, height = png_size(image)
        assert 200 <= width <= 4000 and 100 <= height <= 4000, (image.name, width, height)
        assert image.stat().st_size < 1_000_000, (image.name, image.stat().st_size)


def test_png_size_reads_the_header_and_refuses_other_files(tmp_path: Path) -> None:
    fake = tmp_path / "fake.png"
    fake.write_bytes(b"GIF89a" + bytes(40))
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(fake)
    made = tmp_path / "made.png"
    ihdr = struct.pack(">II5B", 640, 480, 8, 6, 0, 0, 0)
    made.write_bytes(PNG_MAGIC + struct.pack(">I", 13) + b"IHDR" + ihdr + bytes(4))
    assert png_size(made) == (640, 480)


def test_every_screenshot_is_taken_by_the_script() -> None:
    taken = {shot.name for shot in _script().SHOTS}
    present = {p.name for p in SCREENSHOTS.glob("*.png")}
    assert present == taken, {"not taken": present - taken, "missing": taken - present}
    shown = {image.name for page in PAGES for image in _images(page) if image.parent == SCREENSHOTS}
    assert shown == taken, {"not shown": taken - shown, "not taken": shown - taken}
