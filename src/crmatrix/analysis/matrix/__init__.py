"""The phase matrix assembled from its cells: `assemble` (and `build`, `write`), one module per part."""
