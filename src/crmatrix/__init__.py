"""crmatrix: the experiment matrix of code retrieval.

The library behind the Snakemake workflow; it never imports Snakemake, so the CLI and
notebooks can use every stage directly.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("crmatrix")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"


# A logger whose records a workflow job also shows on the user's terminal, besides its log
# (crmatrix.pipeline.jobs): a run's one-line outcome, say, which a log alone would hide. Here,
# where every stage's code already is, so routing it does not put progress.py in every stage's hash.
TERMINAL = "crmatrix.terminal"


class CrmatrixError(Exception):
    """A user-facing error: its message names the file, row or key and what was expected."""
