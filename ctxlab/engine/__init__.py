"""The deterministic agent loop over the pure core: no file or network I/O."""
