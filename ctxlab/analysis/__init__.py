"""Analysis of results: load them into DataFrames, draw figures, write the index (the I/O edge).

`load_results(folder)` reads one scenario's results; `ctxlab.analysis.plots` draws figures from
the frames; nothing here runs a scenario. The names below load pandas only when first used, so
writing the index (`report`, which reads the runs table without pandas) stays quick to start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxlab.analysis.folders import result_folders
    from ctxlab.analysis.results import Results, iter_requests, load_results, read_requests

__all__ = ["Results", "iter_requests", "load_results", "read_requests", "result_folders"]


def __getattr__(name: str) -> Any:
    if name == "result_folders":
        from ctxlab.analysis import folders

        return folders.result_folders
    if name in __all__:
        from ctxlab.analysis import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
