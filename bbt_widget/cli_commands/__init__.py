"""The ``bbt-widget`` command's subcommands, one module each (``report``, ``calibrate``,
``demo``), and what they share: the exit codes and messages (``common``), the checks of the
options against the data before any fit (``checks``) and the progress on stderr
(``progress``). ``bbt_widget/cli.py`` holds the argument parser and the entry point.

Every module here imports the package's heavy parts (the engines, Altair, the report writer)
inside its functions, so that ``bbt-widget --help`` and a refused option answer at once.
"""
