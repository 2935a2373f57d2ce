"""Outputs: exports (tables, figures), the methods text and the reports.

They read results from the core; the core never imports them.
"""
