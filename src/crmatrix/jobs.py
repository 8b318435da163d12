"""How one workflow job runs a stage: one clear error line, no half-written output left behind."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

from crmatrix import CrmatrixError, atomic

RESULTS_DIR = Path("results")


@contextlib.contextmanager
def job(log_path: str, outputs: list[str]) -> Iterator[None]:
    """Send the job's stderr and logging to its log; on failure drop the empty directories made
    for its outputs and exit non-zero, with a user error as one line instead of a traceback."""
    log = open(log_path, "w", buffering=1)
    sys.stderr = log
    logging.basicConfig(stream=log, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    try:
        yield
    except BaseException as e:
        for out in outputs:
            atomic.prune_empty_parents(Path(out), RESULTS_DIR)
        if isinstance(e, CrmatrixError):
            print(f"crmatrix: {e}", file=log)
            log.close()
            raise SystemExit(1) from None
        raise
