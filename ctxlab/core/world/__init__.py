"""The fake world a workload plays in: scripts, documents and their reader, artifacts, what a
model reads from a request, and retention probes."""
