"""Analysis: statistics over runs, the phase matrix, pooling, gates and baselines."""
