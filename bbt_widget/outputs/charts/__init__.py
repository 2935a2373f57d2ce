"""Charts of a fit: tidy frames (pure pandas) in, Altair specs out.

Two layers, both pure:

* frames (:mod:`.frames`, :mod:`.frames_ppc`, :mod:`.frames_decisions`,
  :mod:`.frames_groups`, with the pair keys
  and labels of :mod:`.pairs`) reshape what :class:`bbt_widget.core.result.BBTResult` returns into
  the tidy frames the charts draw. They add presentation columns only (labels, order, a pair
  key); every statistic comes from the core. They never import Altair, so the widget builds
  and sends its data without it.
* specs (:mod:`.specs` for the linked view, :mod:`.specs_ppc`, :mod:`.specs_robustness`,
  :mod:`.specs_summary`, :mod:`.specs_cd` for the critical-difference diagram,
  :mod:`.specs_groups` for the decisions by group, on the shared
  pieces of :mod:`.encodings`) turn frames into Altair charts; :mod:`.spec_cache` keeps the
  widget's two specs on disk. Altair itself is imported on first use.

Linking: every frame carries ``key`` (:func:`pair_key`) and ``alg_a``/``alg_b``; two Vega
parameters, ``sel_pair`` and ``sel_focus``, drive the highlight in every chart of a view.
The colours are in :mod:`bbt_widget.core.palette`. Every public name is importable from here.

The package imports only the core, so it sits below the lab and the baselines in the layers:
the ``chart()`` methods of a sweep and of an influence analysis draw through
:mod:`.specs_robustness`, the one home of the robustness charts.
"""

from __future__ import annotations

from ...core.palette import DECISION_COLORS, SWEEP_DECISION_COLORS
from .encodings import (
    FOCUS_PARAM,
    HDI_PARAM,
    LABEL_AXIS,
    LABEL_MAX_CHARS,
    PAIR_PARAM,
    at_rest,
)
from .frames import (
    FIT_DATASETS,
    ROBUSTNESS_DATASETS,
    VIEW_DATASETS,
    ChartFrames,
    build_frames,
    coverage_frame,
    interval_frame,
    matrix_frame,
    overlap_frame,
    range_frame,
    rope_frame,
    to_columns,
    to_records,
)
from .frames_decisions import (
    FLIPS_ALL_PAIRS,
    INFLUENCE_TOP,
    cd_groups,
    claim_counts,
    decision_frame,
    flips_frame,
    influence_frame,
)
from .frames_groups import GROUP_CELLS, POOLED_COLUMN, group_cells, group_cells_frame
from .frames_ppc import (
    ppc_fit_frame,
    ppc_frame,
    predictive_p,
    worst_pairs_label,
    worst_ppc_frame,
)
from .pairs import decision_text, pair_key, pair_words, unsettled_keys, verdict_kind
from .spec_cache import checks_spec, groups_spec, robustness_spec, view_spec
from .specs import (
    chart_set,
    checks_chart,
    coverage_chart,
    intervals_chart,
    linked_chart,
    pairs_chart,
    result_charts,
    rope_overlap_chart,
    win_matrix_chart,
)
from .specs_cd import CD_POSITIONS, cd_diagram
from .specs_groups import group_decisions_chart, group_heatmap_chart, groups_chart
from .specs_ppc import PPC_MAX_PAIRS, ppc_chart, static_ppc_chart
from .specs_robustness import (
    flips_chart,
    influence_chart,
    influence_top_chart,
    robustness_chart,
    sweep_chart,
)
from .specs_summary import LONG_CHART_ROWS, decision_matrix_chart, ranking_chart, with_top_axis

__all__ = [
    "CD_POSITIONS",
    "DECISION_COLORS",
    "FIT_DATASETS",
    "FLIPS_ALL_PAIRS",
    "FOCUS_PARAM",
    "GROUP_CELLS",
    "HDI_PARAM",
    "INFLUENCE_TOP",
    "LABEL_AXIS",
    "LABEL_MAX_CHARS",
    "LONG_CHART_ROWS",
    "PAIR_PARAM",
    "POOLED_COLUMN",
    "PPC_MAX_PAIRS",
    "ROBUSTNESS_DATASETS",
    "SWEEP_DECISION_COLORS",
    "VIEW_DATASETS",
    "ChartFrames",
    "at_rest",
    "build_frames",
    "cd_diagram",
    "cd_groups",
    "chart_set",
    "checks_chart",
    "checks_spec",
    "claim_counts",
    "coverage_chart",
    "coverage_frame",
    "decision_frame",
    "decision_matrix_chart",
    "decision_text",
    "flips_chart",
    "flips_frame",
    "group_cells",
    "group_cells_frame",
    "group_decisions_chart",
    "group_heatmap_chart",
    "groups_chart",
    "groups_spec",
    "influence_chart",
    "influence_frame",
    "influence_top_chart",
    "interval_frame",
    "intervals_chart",
    "linked_chart",
    "matrix_frame",
    "overlap_frame",
    "pair_key",
    "pair_words",
    "pairs_chart",
    "ppc_chart",
    "ppc_fit_frame",
    "ppc_frame",
    "predictive_p",
    "range_frame",
    "ranking_chart",
    "result_charts",
    "robustness_chart",
    "robustness_spec",
    "rope_frame",
    "rope_overlap_chart",
    "static_ppc_chart",
    "sweep_chart",
    "to_columns",
    "to_records",
    "unsettled_keys",
    "verdict_kind",
    "view_spec",
    "win_matrix_chart",
    "with_top_axis",
    "worst_pairs_label",
    "worst_ppc_frame",
]
