"""The robustness lab: many fits through one batch layer (local cores or Dask).

``batch`` runs the fits; ``sweep``, ``influence`` and ``calibration`` ask their questions of them.
"""
