"""How one workflow job runs a stage: errors on the user's terminal, no half-written output left behind."""

from __future__ import annotations

import contextlib
import logging
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

from crmatrix import TERMINAL, CrmatrixError, atomic

RESULTS_DIR = Path("results")


@contextlib.contextmanager
def job(log_path: str, outputs: list[str]) -> Iterator[None]:
    """Send the job's stderr and logging to its log. On failure drop the empty directories
    made for its outputs and exit non-zero; the error goes to the log *and* to the terminal
    (Snakemake itself prints only "check the log"): one line for a user error or a write out of
    room (a full disk, `ulimit -f`: which output, and what it needed), the traceback for anything
    else, since that is a bug or a fault the user must see to report. Records of
    the `crmatrix.TERMINAL` logger go to both as well. It starts by removing the temporaries a
    killed earlier run of this job left beside its outputs (`kill -9` mid-write)."""
    for out in outputs:
        atomic.drop_stale_temporaries(Path(out))
    terminal = sys.stderr
    log = open(log_path, "w", buffering=1)
    sys.stderr = log
    logging.basicConfig(stream=log, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    shown = logging.StreamHandler(terminal)
    shown.setFormatter(logging.Formatter("crmatrix: %(message)s"))
    logging.getLogger(TERMINAL).addHandler(shown)
    try:
        yield
    except BaseException as e:
        for out in outputs:
            atomic.prune_empty_parents(Path(out), RESULTS_DIR)
        if isinstance(e, SystemExit) and not e.code:
            raise
        if isinstance(e, OSError) and e.errno in atomic.SPACE_ERRORS:  # a write no atomic writer made
            where = e.filename or ", ".join(map(str, outputs))
            e = atomic.space_error(where, e, "ran out of room writing this step's outputs")
        text = f"crmatrix: {e}\n" if isinstance(e, CrmatrixError) else "".join(traceback.format_exception(e))
        for stream in (log, terminal):
            stream.write(text)
            stream.flush()
        log.close()
        sys.stderr = terminal
        raise SystemExit(1) from None
    finally:
        logging.getLogger(TERMINAL).removeHandler(shown)
