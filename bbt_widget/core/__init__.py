"""The core: options, parsing and checks of the results, win tables, the fit and its result.

Nothing here imports the outputs, the robustness lab or the widget (ARCHITECTURE.md).
"""
