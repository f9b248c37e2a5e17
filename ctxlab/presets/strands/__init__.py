"""strands-agents 1.62 conversation managers: the sliding window and the summarizing manager."""
