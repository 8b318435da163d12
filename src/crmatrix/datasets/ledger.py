"""The test-split ledger (baselines/test-ledger.json): how often each config was scored on a
test split, so that a test set is looked at once — iterate on small_dev, confirm on test.

A config is what a score stands on: the dataset file's sha256 and the split, the system's
settings, the arm's variables (in their parsed spelling) and the model's files (sha256) —
never a name or a path, so a renamed dataset or arm, or a moved checkout, is the same config.
The split's seed is left out on purpose: another seed deals the same tasks anew, and scoring
a config under it is one more look at the same test set.

Three places act on it, so that a run that does nothing is never refused and a killed one never
counted: the workflow refuses to score a config the ledger holds once its plan is made, before
any job starts and so before Snakemake removes the run it would replace
(crmatrix.pipeline.rescoring), and evaluate_arm again before its first query, for what the
plan could not key (unless forced: `--config force_test=true`, which reaches the workflow and
the job as CRMATRIX_FORCE_TEST, since it changes no result and must re-run nothing);
collect_matrix, once the matrix is written, records each test-split run it aggregated, by the
run file's sha256 (each cell's statistics carry its run's `scoring`), so rebuilding the matrix
over the same runs counts nothing twice.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

from crmatrix import CrmatrixError, atomic
from crmatrix.datasets.holdout import TEST_SPLITS

if TYPE_CHECKING:
    from crmatrix.results.run import Run

PATH = Path("baselines/test-ledger.json")  # under the working directory, beside promoted baselines
FORMAT = "crmatrix-test-ledger/1"
FORCE_VAR = "CRMATRIX_FORCE_TEST"
FORCE_HINT = "--config force_test=true"


def export(force: bool, environ: MutableMapping[str, str] = os.environ) -> None:
    environ[FORCE_VAR] = "1" if force else "0"


def forced(environ: MutableMapping[str, str] = os.environ) -> bool:
    return environ.get(FORCE_VAR) == "1"


def config_key(dataset_sha256: str, split: str, system_conf: dict, env: dict, model: dict | None) -> str:
    system = {k: v for k, v in system_conf.items() if k != "name"}
    return atomic.hash_obj({"dataset": dataset_sha256, "split": split, "system": system, "env": env,
                            "model": (model or {}).get("sha256")})[:12]


def run_key(run: Run) -> str:
    prov = run.provenance
    return config_key(prov.dataset.sha256, prov.dataset.split, prov.system.to_json(), prov.arm.env, prov.model)


def is_test(split: str | None) -> bool:
    return split in TEST_SPLITS


def read(path: Path = PATH) -> dict:
    if not Path(path).exists():
        return {"format": FORMAT, "configs": {}}
    ledger = atomic.read_json(Path(path))
    if not isinstance(ledger, dict) or ledger.get("format") != FORMAT or not isinstance(ledger.get("configs"), dict):
        raise CrmatrixError(f"{path}: not a crmatrix test-split ledger (expected 'format': {FORMAT!r})")
    return ledger


def check(key: str, dataset: str, split: str, force: bool, path: Path = PATH) -> None:
    """Refuse a second scoring of the config `key` on a test split, unless forced."""
    entry = read(path)["configs"].get(key)
    if entry is None or force:
        return
    dates = ", ".join(sorted({s["date"] for s in entry["scorings"]}))
    raise CrmatrixError(f"config {key} was scored on {split} split of {dataset} {len(entry['scorings'])} time(s) on "
                        f"{dates} ({path}); iterate on small_dev, or pass {FORCE_HINT} to score it again")


def scoring(run: Run, sha256: str) -> dict | None:
    """What the ledger records of a run (its file's sha256 beside it) when it scored a test
    split: where it stands, its config and the run file; None for a run on any other split."""
    split = run.provenance.dataset.split
    if not is_test(split):
        return None
    return {"dataset": run.dataset, "system": run.system, "arm": run.arm, "split": split,
            "config": run_key(run), "run_sha256": sha256}


def add(ledger: dict, scorings: list[dict], today: dt.date | None = None) -> bool:
    """Add to `ledger` each test-split run's scoring (`scoring`) not in it yet; True if any was."""
    date = (today or dt.datetime.now(dt.UTC).date()).isoformat()
    changed = False
    for s in scorings:
        entry = ledger["configs"].setdefault(s["config"], {
            "dataset": s["dataset"], "split": s["split"], "system": s["system"], "arm": s["arm"], "scorings": []})
        if s["run_sha256"] not in {x["run_sha256"] for x in entry["scorings"]}:
            entry["scorings"].append({"date": date, "run_sha256": s["run_sha256"]})
            changed = True
    return changed


def entries(ledger: dict, scorings: list[dict]) -> list[dict]:
    """What the ledger says of each test-split run's scoring, for the matrix: its config and how
    often and when that config was scored, sorted by dataset, system and arm."""
    out = []
    for s in scorings:
        dates = ledger["configs"].get(s["config"], {}).get("scorings", [])
        out.append({"dataset": s["dataset"], "system": s["system"], "arm": s["arm"], "split": s["split"],
                    "config": s["config"], "count": len(dates), "dates": sorted({x["date"] for x in dates})})
    return sorted(out, key=lambda e: (e["dataset"], e["system"], e["arm"]))


def write(ledger: dict, path: Path = PATH) -> None:
    atomic.write_json(Path(path), ledger)
