"""Charts of a fit: tidy frames (pure pandas) in, Altair specs out.

``bbt.charts`` exports the charts a user draws (:data:`__all__`): every chart of a fit at once
(:func:`result_charts`), each on its own from the frames of :func:`build_frames`, the ranking
and decision-matrix figures of a report, the critical-difference diagram of a fit
(:func:`fit_cd_diagram`), the decisions by group (:func:`group_decisions_chart`), and the
helpers that name a pair (:func:`pair_key`, :func:`decision_text`). The rest (the widget's
specs, its frames and JSON, the Vega parameters) is the package's own: its modules import it
from the module that defines it.

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
The colours are in :mod:`bbt_widget.core.palette`.

The package imports only the core, so it sits below the lab and the baselines in the layers:
the ``chart()`` methods of a sweep and of an influence analysis draw through
:mod:`.specs_robustness`, the one home of the robustness charts.
"""

from __future__ import annotations

from .frames import build_frames
from .frames_decisions import claim_counts, decision_frame
from .frames_more_data import more_data_frame
from .pairs import decision_text, pair_key
from .specs import (
    coverage_chart,
    intervals_chart,
    result_charts,
    rope_overlap_chart,
    win_matrix_chart,
)
from .specs_cd import fit_cd_diagram
from .specs_groups import group_decisions_chart
from .specs_more_data import more_data_chart
from .specs_ppc import ppc_chart
from .specs_summary import decision_matrix_chart, ranking_chart

__all__ = [
    "build_frames",
    "claim_counts",
    "coverage_chart",
    "decision_frame",
    "decision_matrix_chart",
    "decision_text",
    "fit_cd_diagram",
    "group_decisions_chart",
    "intervals_chart",
    "more_data_chart",
    "more_data_frame",
    "pair_key",
    "ppc_chart",
    "ranking_chart",
    "result_charts",
    "rope_overlap_chart",
    "win_matrix_chart",
]
