"""Corpora: pins, fetching, the tree as indexed and its manifest, languages."""
