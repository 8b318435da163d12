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


def did_you_mean(name: str, known: list[str], form: str = "did you mean {!r}? ") -> str:
    """`form` filled with the known name closest to `name` (`did you mean 'X'? `), or "" when
    none is close: how every message offers the name a misspelling meant. Here, beside the
    error it goes into, so that using it puts no other module in a stage's code hash."""
    import difflib  # only when a message is made: not in every job's imports

    close = difflib.get_close_matches(name, known, n=1)
    return form.format(close[0]) if close else ""
