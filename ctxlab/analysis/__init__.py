"""Analysis of results: load them into DataFrames, draw figures, write the index (the I/O edge).

`load_results(folder)` reads one scenario's results; `ctxlab.analysis.plots` draws figures from
the frames; nothing here runs a scenario.
"""

from ctxlab.analysis.results import Results, load_results, result_folders

__all__ = ["Results", "load_results", "result_folders"]
