# Config validation and the helpers the rules share. Everything a job depends on is handed
# to it as input or params from here, never read from `config` inside a script.
import os
import sys

from crmatrix import CrmatrixError
from crmatrix import config as crconfig
from crmatrix.pins import path_fingerprint

try:
    CFG = crconfig.validate(config, source="config")
except CrmatrixError as e:
    sys.exit(f"crmatrix: {e}")

# Mirror directories only say where an immutable commit may be found; the env var lets a
# machine add its own without editing the matrix.
MIRRORS = CFG["git_mirrors"] + [
    d for d in os.environ.get("CRMATRIX_GIT_MIRRORS", "").split(os.pathsep) if d
]
CORPORA = sorted(CFG["corpora"])
DATASETS = sorted(CFG["datasets"])
SYSTEMS = sorted(CFG["systems"])
ARMS = list(CFG["arms"])


wildcard_constraints:
    corpus="[^/]+",
    dataset="[^/]+",
    system="[^/]+",
    arm="[^/]+",


def corpus_params(wildcards):
    """The pin and selection; a path corpus adds a fingerprint of its files so edits re-run it."""
    conf = dict(CFG["corpora"][wildcards.corpus])
    if "path" in conf:
        conf["fingerprint"] = path_fingerprint(conf["path"])
    return conf


def dataset_corpus(wildcards):
    return CFG["datasets"][wildcards.dataset]["corpus"]


def run_files():
    return [
        f"results/runs/{d}/{s}/{a}.json" for d in DATASETS for s in SYSTEMS for a in ARMS
    ]
