"""The report's text from its Jinja2 templates against the hand-built writers they replace,
in the same process, on the same content.

The hand-built writers (``_html``, ``_md``, ``_tex``) are loaded from a git revision of
``bbt_widget/outputs/html_report.py`` (``--before``, default: the last commit that has them)
into a module of the current package, so both render the very same report content: the fit,
the tables and the rendered charts are made once per format and then only the text is
rendered, interleaved, ``--repeat`` times each. The outputs are compared byte for byte.

Case: the shipped ``pmlb16_4fold.csv`` (16 algorithms x 132 data sets, fold rows), default
settings. The templates replace the hand-built writers only if their median is at most 10%
slower (``limit_ratio``).

Run: ``python benchmarks/bench_templates.py [--repeat 20] [--before REV] [--note TEXT]``.
Results go to ``benchmarks/results/templates.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _machine import machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget.outputs.report import _render as report_render  # noqa: E402

LIMIT_RATIO = 1.10
BEFORE = "5fcdb9e"
WRITERS = {"html": "_html", "md": "_md", "tex": "_tex"}


def hand_built(rev: str) -> types.ModuleType:
    """The report module as it was at ``rev``, loaded beside the current package's modules."""
    source = subprocess.run(
        ["git", "show", f"{rev}:bbt_widget/outputs/html_report.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("bbt_widget.outputs._hand_built_report")
    module.__package__ = "bbt_widget.outputs"
    sys.modules[module.__name__] = module  # its dataclasses look their module up
    exec(compile(source, "html_report.py (hand-built)", "exec"), module.__dict__)
    return module


def content_of(result: bbt.BBTResult, fmt: str, folder: Path) -> tuple[object, dict[str, str]]:
    """What ``write_report`` hands its renderer for this fit in ``fmt``."""
    seen: dict[str, object] = {}

    def capture(fmt: str, c: object, captions: dict[str, str]) -> str:
        seen.update(c=c, captions=captions)
        return ""

    with mock.patch.object(report_render, "_render", side_effect=capture):
        report_render.write_report(result, folder / f"report.{fmt}")
    return seen["c"], seen["captions"]  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--note", default="", help="recorded with the results (e.g. the load)")
    args = parser.parse_args()
    load = os.getloadavg()
    old = hand_built(args.before)
    result = bbt.fit(bbt.datasets.load_pmlb16(), dataset="db")
    formats: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, writer in WRITERS.items():
            c, captions = content_of(result, fmt, Path(tmp))
            before, after = getattr(old, writer), report_render._render
            identical = before(c, captions) == after(fmt, c, captions)  # also the warm-up
            times: dict[str, list[float]] = {"hand_built_s": [], "templates_s": []}
            for _ in range(args.repeat):
                start = time.perf_counter()
                before(c, captions)
                times["hand_built_s"].append(time.perf_counter() - start)
                start = time.perf_counter()
                after(fmt, c, captions)
                times["templates_s"].append(time.perf_counter() - start)
            median = {k: statistics.median(v) for k, v in times.items()}
            ratio = median["templates_s"] / median["hand_built_s"]
            formats[fmt] = {
                "identical_output": identical,
                "median": median,
                "templates_to_hand_built": ratio,
                "within_limit": ratio <= LIMIT_RATIO,
                "runs": times,
            }
            print(fmt, json.dumps({k: formats[fmt][k] for k in list(formats[fmt])[:4]}))
    out = {
        "machine": machine(load),
        "note": args.note,
        "case": "pmlb16_4fold.csv (16 x 132), default settings: the report's text only",
        "before": args.before,
        "limit_ratio": LIMIT_RATIO,
        "formats": formats,
    }
    path = REPO / "benchmarks" / "results" / "templates.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
