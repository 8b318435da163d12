"""What the workflow shares: the config, the plan of each job, code hashes, job wrapping, slices, sweeps, caches."""
