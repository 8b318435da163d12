"""crmatrix: the experiment matrix of code retrieval.

The library behind the Snakemake workflow; it never imports Snakemake, so the CLI and
notebooks can use every stage directly.
"""

# The one place the version is written (pyproject.toml reads it): a literal, not
# importlib.metadata's lookup, whose import alone is ~35 ms of CPU in every job.
__version__ = "0.1.0"


# A logger whose records a workflow job also shows on the user's terminal, besides its log
# (crmatrix.pipeline.jobs): a run's one-line outcome, say, which a log alone would hide. Here,
# where every stage's code already is, so routing it does not put progress.py in every stage's hash.
TERMINAL = "crmatrix.terminal"


class CrmatrixError(Exception):
    """A user-facing error: its message names the file, row or key and what was expected."""
