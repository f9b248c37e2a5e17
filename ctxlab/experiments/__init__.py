"""Running scenarios: grids, executors, workspaces on disk, and result files (the I/O edge)."""
