"""crmatrix: the experiment matrix of code retrieval.

The library behind the Snakemake workflow; it never imports Snakemake, so the CLI and
notebooks can use every stage directly.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("crmatrix")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"


class CrmatrixError(Exception):
    """A user-facing error: its message names the file, row or key and what was expected."""
