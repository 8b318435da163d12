"""Evaluation: one (dataset, system, arm) run, its metrics, token efficiency, TREC files, provenance."""
