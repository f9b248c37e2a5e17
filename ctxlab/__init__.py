"""ctxlab: a deterministic lab for context engineering.

Scripted fake models and scripted or replayed workloads drive real context-management
algorithms; the lab records every model request, checks it against the providers' protocol
rules, and measures tokens, cost with prompt caching, and what was lost.
"""

__version__ = "0.1.0"
