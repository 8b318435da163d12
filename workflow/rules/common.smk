# Config validation and the helpers the rules share. Everything a job depends on is handed
# to it as input or params from here, never read from `config` inside a script.
import os
import sys
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix import config as crconfig
from crmatrix.atomic import hash_obj
from crmatrix.engine import knobs as crknobs
from crmatrix.pins import path_fingerprint
from crmatrix.systems import needs_index

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
    model="[^/]+",
    index_key="[0-9a-f]{12}",


LIBRARY = Path(crconfig.__file__).parent


def code_hash(*modules):
    """A hash of the library modules a stage runs, so editing them re-runs that stage only
    (Snakemake's own code trigger sees the thin scripts, not the library they call)."""
    files = sorted(p for m in modules for p in LIBRARY.glob(m))
    return hash_obj([[p.relative_to(LIBRARY).as_posix(), p.read_text()] for p in files])[:16]


CODE = {
    "fetch_corpus": code_hash("pins.py", "corpus.py", "atomic.py"),
    "extract_symbols": code_hash("symbols.py"),
    "prepare_model": code_hash("embed/*.py"),
    "build_index": code_hash("engine/*.py", "embed/*.py"),
    "prepare_dataset": code_hash("datasets.py"),
    "evaluate_arm": code_hash(
        "engine/*.py", "embed/*.py", "systems/*.py", "evaluate.py", "metrics.py", "datasets.py",
        "hits.py", "provenance.py", "tokens.py", "answers.py", "guard.py", "tokenbench.py",
    ),
    "collect_matrix": code_hash("matrix.py", "stats.py", "metrics.py"),
}


def arm_model(arm):
    return CFG["arms"][arm].get(crconfig.MODEL_VAR, CFG["default_model"])


def index_key(arm):
    """Arms whose embedding text and model agree share one index: the key hashes the parsed
    index-time knobs (not their spelling) and the model, never the arm's name."""
    model = arm_model(arm)
    spec = {
        "knobs": crknobs.index_spec(CFG["arms"][arm]),
        "model": model,
        "model_conf": CFG["models"][model],
    }
    return hash_obj(spec)[:12]


# index key -> the first arm (in config order) that uses it; its index-time variables build it
INDEX_ARM = {}
for _arm in ARMS:
    INDEX_ARM.setdefault(index_key(_arm), _arm)


def index_env(wildcards):
    env = CFG["arms"][INDEX_ARM[wildcards.index_key]]
    return {k: v for k, v in sorted(env.items()) if k in crknobs.INDEX_TIME_VARS}


def evaluate_inputs(wildcards):
    corpus = dataset_corpus(wildcards)
    inputs = {
        "tasks": f"results/datasets/{wildcards.dataset}.jsonl",
        "dataset_file": CFG["datasets"][wildcards.dataset]["file"],
        "tree": f"results/corpora/{corpus}/tree",
        "manifest": f"results/corpora/{corpus}/manifest.json",
        "symbols": f"results/symbols/{corpus}.jsonl",
    }
    if needs_index(CFG["systems"][wildcards.system]):
        key = index_key(wildcards.arm)
        inputs["index"] = f"results/index/{corpus}/{wildcards.system}/{key}"
        inputs["model"] = f"results/models/{arm_model(wildcards.arm)}"
    return inputs


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
