"""The Jupyter front end: the ``BBTWidget`` (``app``), its views and the background fit runner.

The class is ``bbt_widget.BBTWidget``; importing this package does not import anywidget.
"""
