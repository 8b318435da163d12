"""Each pipeline stage as one call from input paths to output paths, one module per stage.

The workflow scripts and the CLI both call these, so a stage behaves the same inside
Snakemake and outside it. Each module imports only what its stage runs: the stage's code
hash (`crmatrix.codehash`) follows those imports, so an edit re-runs the stages it touches.
"""
