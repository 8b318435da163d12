# Config validation and the helpers the rules share. Everything a job depends on is handed
# to it as input or params from here, never read from `config` inside a script; what it
# does not depend on (where mirrors, registries and caches are) goes by environment.
import functools
import math
import re
import sys
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.corpora import views
from crmatrix.pipeline import config as crconfig
from crmatrix.pipeline import experiment
from crmatrix.systems import install
from crmatrix.datasets import ledger
from crmatrix.pipeline import locations
from crmatrix.pipeline import rescoring
from crmatrix.pipeline import sweeps
from crmatrix.pipeline import slices as crslices
from crmatrix.pipeline import codehash
from crmatrix.corpora.pins import path_fingerprint
from crmatrix.embed.models import package_versions as model_packages
from crmatrix.datasets.registry import FORMATS, written_by
from crmatrix.plots import names as plot_names
from crmatrix.plots import runtime as plot_runtime
from crmatrix.systems.registry import answers_calls, needs_index

# The file(s) the config was read from, for its errors and warnings.
CONFIG_SOURCE = ", ".join(map(str, workflow.configfiles)) or "config"
try:
    CFG = crconfig.validate(config, source=CONFIG_SOURCE)
    # system -> its own environment, for the systems the workflow installs (keyed by what it holds)
    VENVS = {
        s: experiment.venv_dir(CFG, s)
        for s in CFG["systems"]
        if CFG["systems"][s].get("install")
    }
except CrmatrixError as e:
    sys.exit(f"crmatrix: {e}")

for _warning in crconfig.clamp_warnings(
    CFG
):  # a valid config, but an arm that measures another value
    print(f"crmatrix: warning: {CONFIG_SOURCE}: {_warning}", file=sys.stderr)
locations.export(CFG)
install.export_sources(CFG)
ledger.export(
    CFG
)  # force_test changes no result: it reaches the jobs as a variable, never as a param


envvars:
    *locations.VARS,
    ledger.FORCE_VAR,


CORPORA = sorted(CFG["corpora"])
# the docs-withheld views of corpora that derived datasets are scored on (crmatrix.corpora.views)
VIEWS = sorted(c for c in CORPORA if views.source(CFG["corpora"][c]))
# Corpora written out of a benchmark file by its dataset format (rule write_corpus), and the
# fetched ones (rule fetch_corpus)
WRITTEN_CORPORA = sorted(c for c in CORPORA if written_by(CFG["corpora"][c]))
FETCHED_CORPORA = sorted(set(CORPORA) - set(WRITTEN_CORPORA) - set(VIEWS))
DATASETS = experiment.retrieval_datasets(CFG)
CALLGRAPH_DATASETS = experiment.callgraph_datasets(CFG)
SPLIT_DATASETS = sorted(d for d in CFG["datasets"] if experiment.derived_split(CFG, d))
PLAIN_DATASETS = sorted(set(CFG["datasets"]) - set(SPLIT_DATASETS))
# dataset -> its structural split: the matrix and the forests pool such a dataset apart
DATASET_SPLITS = {d: experiment.derived_split(CFG, d) for d in SPLIT_DATASETS}
SYSTEMS = sorted(CFG["systems"])
COMPARE = experiment.compare_pairs(CFG)
# system -> corpus -> index key -> the first arm with that key, whose model builds the index
# (and its variables, where the plan could not resolve them); per corpus, since an arm gating
# by language resolves on the corpus's declared one and may share another arm's index there
INDEX_ARM = {
    s: {corpus: experiment.index_arms(CFG, c, corpus) for corpus in CORPORA}
    for s, c in CFG["systems"].items()
    if needs_index(c)
}


wildcard_constraints:
    corpus="[^/]+",
    dataset="[^/]+",
    system="[^/]+",
    arm="[^/]+",
    model="[^/]+",
    index_key="[0-9a-f]{12}",
    install_key="[0-9a-f]{12}",


SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"
# The imports of each module by a hash of its text, so planning parses only edited modules
# (the Snakefile saves it once every rule has asked for its code's hash); planning's own state,
# kept beside Snakemake's in the working directory, never among the results.
CODE_MEMO = codehash.Memo(Path(".snakemake") / "crmatrix" / "codehash-imports.json")


def code(rule_name):
    """A hash of the library code the rule's script runs (Snakemake's own code trigger sees
    the thin script only), so editing a module re-runs exactly the stages that import it.
    """
    return codehash.stage_hash(SCRIPTS / f"{rule_name}.py", CODE_MEMO)


def index_arm(wildcards):
    return INDEX_ARM[wildcards.system][wildcards.corpus][wildcards.index_key]


def index_knobs(wildcards):
    return experiment.index_knobs(CFG, index_arm(wildcards), wildcards.corpus)


def index_env(wildcards):
    conf = CFG["systems"][wildcards.system]
    return experiment.index_env(CFG, conf, index_arm(wildcards))


def one_of(names):
    """A wildcard pattern matching exactly these names (none: nothing)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


# The builtin engine's indexes and external systems' index commands are different rules
# writing the same kind of path; each rule's `system` wildcard admits only its own systems.
BUILTIN_SYSTEMS = one_of(s for s, c in CFG["systems"].items() if c["type"] == "builtin")
EXTERNAL_SYSTEMS = one_of(
    s for s, c in CFG["systems"].items() if c["type"] != "builtin"
)
INSTALLED_SYSTEMS = one_of(VENVS)


def job_system(wildcards):
    """The system's settings as its jobs get them (experiment.job_conf)."""
    return experiment.job_conf(CFG["systems"][wildcards.system], CFG["models"])


def index_system(wildcards):
    """The index-time part of the system's settings (experiment.index_conf): a query-time
    change leaves its index job's params alone."""
    return experiment.index_conf(CFG["systems"][wildcards.system], CFG["models"])


# Job runtimes (minutes) that the config bounds: an evaluation spends at most its system's
# `budget_s` on queries, plus loading (index, model, an MCP server's start) and the token
# benchmark; an external index command at most its `index_timeout_s`. A scheduler kills a job
# at its runtime, so these follow the config instead of a guess.
def _minutes(seconds, margin):
    return math.ceil(seconds / 60) + margin


def evaluate_minutes(wildcards):
    return _minutes(CFG["systems"][wildcards.system]["budget_s"], 10)


def system_index_minutes(wildcards):
    return _minutes(CFG["systems"][wildcards.system]["options"]["index_timeout_s"], 5)


def install_inputs(wildcards):
    """An install's constraints file, when it names one (its contents are in the key)."""
    constraints = CFG["systems"][wildcards.system]["install"].get("constraints")
    return {"constraints": constraints} if constraints else {}


def system_venv(wildcards):
    """The system's own environment as an input, for a system the workflow installs."""
    return {"venv": VENVS[wildcards.system]} if wildcards.system in VENVS else {}


def index_models(wildcards):
    """The model exports (rule prepare_model) an external system's index command names as
    {model:NAME}, as an input of its index job."""
    named = experiment.system_models(CFG["systems"][wildcards.system], index_only=True)
    return {"models": [f"results/models/{n}" for n in named]} if named else {}


def home_dir(wildcards):
    """An external system's own HOME for its index (a tool's caches and state), under results/:
    the query jobs reading the index get the same one (experiment.cell)."""
    where = {k: v for k, v in wildcards.items() if k != "system"}
    return experiment.home_dir("results", wildcards.system, where)


def embeds(system):
    """Whether the system's runs embed with a model the workflow prepares: the builtin engine
    when its methods need an index."""
    conf = CFG["systems"][system]
    return conf["type"] == "builtin" and needs_index(conf)


@functools.cache  # asked once per input and parameter of each evaluate_arm job
def _cell(dataset, system, arm):
    return experiment.cell(CFG, dataset, system, arm)


def cell(wildcards):
    """The plan of an evaluation cell (experiment.cell): what `crmatrix run` builds and reads too."""
    return _cell(wildcards.dataset, wildcards.system, wildcards.arm)


def split_inputs(wildcards):
    """A split dataset's file, its corpus's symbols and graph, and the dense ranker's index."""
    corpus = dataset_corpus(wildcards)
    ranker = experiment.split_ranker(CFG, wildcards.dataset)
    return {
        "file": CFG["datasets"][wildcards.dataset]["file"],
        "manifest": f"results/corpora/{corpus}/manifest.json",
        "symbols": f"results/symbols/{corpus}.jsonl",
        "graph": f"results/graph/{corpus}.json",
        "index": f"results/index/{corpus}/{ranker['system']}/{ranker['index_key']}",
        "model": f"results/models/{ranker['model']}",
    }


def dataset_inputs(wildcards):
    """A dataset's file, and the manifest and symbols of the corpus it is read against (and
    its tree, for a format that reads the files); a derived dataset's file is that corpus's
    symbols, which it derives its rows from."""
    source = experiment.dataset_source(CFG, wildcards.dataset)
    symbols = f"results/symbols/{source}.jsonl"
    derived = source != dataset_corpus(wildcards)
    fmt = FORMATS.get(CFG["datasets"][wildcards.dataset]["format"])
    return {
        "file": symbols if derived else CFG["datasets"][wildcards.dataset]["file"],
        "manifest": f"results/corpora/{source}/manifest.json",
        "symbols": symbols,
        **({"tree": f"results/corpora/{source}/tree"} if fmt.reads_tree else {}),
    }


def view_source(wildcards):
    """The corpus a view is made of."""
    return views.source(CFG["corpora"][wildcards.corpus])


def corpus_params(wildcards):
    """The pin and selection; a path corpus adds a fingerprint of its files so edits re-run it.
    A corpus written out of a benchmark file gets the file as an input (written_corpus_file),
    so its parameters hold what is taken from it, never where it lies."""
    conf = dict(CFG["corpora"][wildcards.corpus])
    if "path" in conf:
        conf["fingerprint"] = path_fingerprint(conf["path"])
    fmt = written_by(conf)
    if fmt is not None:
        conf[fmt.corpus_kind] = {
            k: v for k, v in conf[fmt.corpus_kind].items() if k != "file"
        }
    return conf


def written_corpus_file(wildcards):
    """The benchmark file a corpus is written out of (a repoqa or ds1000 corpus)."""
    conf = CFG["corpora"][wildcards.corpus]
    return conf[written_by(conf).corpus_kind]["file"]


def dataset_corpus(wildcards):
    return CFG["datasets"][wildcards.dataset]["corpus"]


# system -> the arms it takes part in (config `arms:` of the system; default all)
SYSTEM_ARMS = {s: experiment.system_arms(CFG, CFG["systems"][s]) for s in SYSTEMS}
# system -> the datasets of the matrix it runs on (config `datasets:` of the system; default all)
SYSTEM_DATASETS = {
    s: [d for d in experiment.system_datasets(CFG, CFG["systems"][s]) if d in DATASETS]
    for s in SYSTEMS
}


def refuse_rescoring(dag):
    """Run before any job (the Snakefile's onstart), so before Snakemake removes a run it
    would replace: a planned scoring of a test split the ledger holds is refused here.
    """
    jobs = list(dag.needrun_jobs())
    planned = [
        rescoring.Planned(
            run=job.output.run,
            dataset=job.wildcards.dataset,
            split=job.params.split["split"],
            dataset_file=Path(job.input.dataset_file),
            system_conf=dict(job.params.system_conf),
            env=dict(job.params.env),
            model_dir=Path(job.input.model) if job.input.get("model") else None,
        )
        for job in jobs
        if job.rule.name == "evaluate_arm"
    ]
    try:
        rescoring.refuse(
            planned, {Path(f) for job in jobs for f in job.output}, ledger.forced()
        )
    except CrmatrixError as e:
        sys.exit(f"crmatrix: {e}")


def cells(pattern):
    """`pattern` for every run of the matrix: each system on each of its datasets under each of
    its arms."""
    return [
        pattern.format(d=d, s=s, a=a)
        for d in DATASETS
        for s in SYSTEMS
        if d in SYSTEM_DATASETS[s]
        for a in SYSTEM_ARMS[s]
    ]


def run_files():
    return cells("results/runs/{d}/{s}/{a}.json")


def cell_files():
    return cells("results/cells/{d}/{s}/{a}.json")


def cell_inputs(wildcards):
    """A cell's run, and the baseline's run of its dataset and system to compare it with (the
    baseline's own cell has none)."""
    inputs = {"run": "results/runs/{dataset}/{system}/{arm}.json".format(**wildcards)}
    if wildcards.arm != CFG["baseline_arm"]:
        inputs["base"] = "results/runs/{dataset}/{system}/{baseline}.json".format(
            baseline=CFG["baseline_arm"], **wildcards
        )
    return inputs


def tracking_files():
    """Each run's JSONL event log, and its receipt from the trackers the config names."""
    logs = cells("results/tracking/{d}/{s}/{a}.jsonl")
    return (
        logs + cells("results/tracking/{d}/{s}/{a}.sent.json")
        if CFG["trackers"]
        else logs
    )


def callgraph_files():
    return [
        f"results/callgraph/{d}/{s}.json"
        for d in CALLGRAPH_DATASETS
        for s in SYSTEMS
        if answers_calls(CFG["systems"][s])
        and d in experiment.system_datasets(CFG, CFG["systems"][s])
    ]


def compare_files():
    """The runs of both sides of every release/candidate pair (config `compare:`), on the
    datasets both sides run."""
    runs = set()
    for p in COMPARE.values():
        both = set(SYSTEM_DATASETS[p["release"]["system"]]) & set(
            SYSTEM_DATASETS[p["candidate"]["system"]]
        )
        runs |= {
            f"results/runs/{d}/{p[k]['system']}/{p[k]['arm']}.json"
            for d in both
            for k in ("release", "candidate")
        }
    return sorted(runs)


# (datasets, systems) for each set of datasets some systems run on, the full set first when any
# system runs on every dataset: one rule drawing the row charts of each (plots.smk)
ROW_CHART_GROUPS = sorted(
    {
        tuple(SYSTEM_DATASETS[s]): tuple(
            t for t in SYSTEMS if SYSTEM_DATASETS[t] == SYSTEM_DATASETS[s]
        )
        for s in SYSTEMS
    }.items(),
    key=lambda group: (group[0] != tuple(DATASETS), group),
)
# sweep -> its axes and cells (crmatrix.pipeline.sweeps), for the grid charts
SWEEPS = sweeps.grids(CFG)
PLOT_STEMS = plot_names.stems(
    SYSTEM_DATASETS,
    SYSTEM_ARMS,
    CFG["baseline_arm"],
    {w: [c["arm"] for c in g["cells"]] for w, g in SWEEPS.items()},
    CFG["reference_system"],
)
PLOT_CATEGORIES = {
    "leaderboard": "0. Systems compared",
    "versus": "0. Systems compared",
    "costs": "0. Systems compared",
    "failures": "0. Systems compared",
    "arms": "2. Per dataset",
    "transitions": "2. Per dataset",
    "heatmap": "3. Across datasets",
    "forest": "3. Across datasets",
    "sweep": "3. Across datasets",
    "latency": "4. Latency",
    "quality-latency": "4. Latency",
    "models": "4. Latency",
}


def plot_outputs(fmt):
    return [f"results/plots/{stem}.{fmt}" for stem in PLOT_STEMS]


# The Vega runtime every chart's HTML loads (crmatrix.plots.runtime), written once.
PLOT_RUNTIME = f"results/plots/{plot_runtime.PATH.as_posix()}"


def chart_report(stem):
    """A chart's SVG (`stem`: kind/..., wildcards allowed), flagged for the report under its
    kind's category and caption, a subcategory per system."""
    kind, *parts = stem.split("/")
    labels = {"chart": kind, **dict(zip(("system", "subject"), parts))}
    # (a line must not start with `report`: Snakemake's parser would read its directive)
    svg = report(
        f"results/plots/{stem}.svg",
        caption=f"../report/{kind}.rst",
        category=PLOT_CATEGORIES[kind],
        subcategory=parts[0] if len(parts) > 1 else None,
        labels=labels,
    )
    return svg


def chart_captions(*kinds):
    """The captions of the kinds a job draws (its report captions read them from its params)."""
    return {k: plot_names.CAPTIONS[k] for k in kinds}


def chart_models(system):
    """arm -> the config's name of the model the system embeds with under it (none: no model),
    the name a chart's legend gives it: a run records a model by its hash and source only.
    """
    if not embeds(system):
        return {}
    return {a: experiment.arm_model(CFG, a) for a in SYSTEM_ARMS[system]}


# What each family of charts draws from (plots.smk), one input function per family. A family
# whose chart shows every arm of a row or of the matrix (a new arm is a new bar, column or
# point) reads the phase matrix, which changes with any run; a family of a few arms reads
# their cells alone (results/cells, which change only with their runs and the baseline's), so
# an added arm leaves its charts be. The charts read whichever files they are handed
# (crmatrix.plots.sources for the matrix, crmatrix.plots.cellview for cells).
MATRIX_STATS = ["results/matrix/phase-matrix.json"]


def system_cells(system, arms):
    """The cells of these arms and the baseline's on every dataset of `system` (those it runs)."""
    wanted = {CFG["baseline_arm"], *arms}
    return [
        f"results/cells/{d}/{system}/{a}.json"
        for d in SYSTEM_DATASETS[system]
        for a in SYSTEM_ARMS[system]
        if a in wanted
    ]


def rows_chart_inputs(wildcards):
    """Every row of {system}: each arm's metric, its interval, which arm it repeats, and each
    query's ranks against the baseline's."""
    return {"stats": MATRIX_STATS}


def forest_chart_inputs(wildcards):
    """{arm} against the baseline on every dataset of {system}, and their pools: their cells."""
    return {"cells": system_cells(wildcards.system, [wildcards.arm])}


def sweep_chart_inputs(wildcards):
    """The cells of the sweep's arms and the baseline on every dataset of {system}."""
    return {
        "cells": system_cells(
            wildcards.system, [c["arm"] for c in SWEEPS[wildcards.sweep]["cells"]]
        )
    }


def heatmap_chart_inputs(wildcards):
    """The whole matrix: its stars are Holm-corrected across each row's arms."""
    return {"stats": MATRIX_STATS}


def latency_chart_inputs(wildcards):
    """Every run (the matrix leaves latency out on purpose), and the matrix's headline metric and method."""
    return {"runs": run_files(), "stats": MATRIX_STATS}


def baseline_runs(systems):
    """The baseline arm's run of each of `systems` on each dataset it runs: systems as they ship."""
    return [
        f"results/runs/{d}/{s}/{CFG['baseline_arm']}.json"
        for d in DATASETS
        for s in systems
        if d in SYSTEM_DATASETS[s]
    ]


def leaderboard_chart_inputs(wildcards):
    """Every system on every dataset, for its score and its pooled Δ against the reference."""
    return {"runs": baseline_runs(SYSTEMS)}


def versus_chart_inputs(wildcards):
    """{system} and the reference system on every dataset: their runs alone."""
    return {"runs": baseline_runs([CFG["reference_system"], wildcards.system])}


def costs_chart_inputs(wildcards):
    """Every system on every dataset (latency, tokens and failures per query; the order of the
    leaderboard)."""
    return {"runs": baseline_runs(SYSTEMS)}


def audit_files():
    return [
        f"results/audit/{d}.{ext}" for d in DATASETS for ext in ("json", "md", "html")
    ]


def matrix_outputs():
    """What `all` builds: the phase matrix, its charts and the Vega runtime their HTML loads, the
    release/candidate gate, every run and its tracking, each dataset's audit, and the call-graph
    table when the config has edge datasets. The runs are named themselves: Snakemake plans a
    missing file only for a target or a job that runs anyway, so a run a failed job removed
    would otherwise stay missing under a matrix that still shows it.
    """
    out = [
        *run_files(),
        "results/matrix/phase-matrix.json",
        "results/matrix/phase-matrix.md",
        "results/plots/index.html",
        PLOT_RUNTIME,
        "results/matrix/gate.json",
        "results/matrix/gate.txt",
        *tracking_files(),
        *audit_files(),
    ]
    if CALLGRAPH_DATASETS and callgraph_files():
        out += ["results/matrix/callgraph.json", "results/matrix/callgraph.md"]
    return out


# The slices (crmatrix.pipeline.slices): a target per dataset, per corpus and per arm (slices.smk).
SLICES = crslices.slices(CFG)


def slice_cells(name):
    return [f"results/cells/{d}/{s}/{a}.json" for d, s, a in SLICES[name]["cells"]]


def slice_arms(name):
    """The slice's arms in config order (the matrix's columns)."""
    present = {a for _, _, a in SLICES[name]["cells"]}
    return [a for a in CFG["arms"] if a in present]


def slice_datasets(name):
    return sorted({d for d, _, _ in SLICES[name]["cells"]})


def slice_retrieval_datasets(name):
    """The slice's datasets of the phase matrix (each with its dataset stage's summary)."""
    return [d for d in slice_datasets(name) if d in DATASETS]


def slice_targets(name):
    """A slice's outputs, its runs named themselves as in matrix_outputs."""
    sl, out = SLICES[name], []
    for c in sl["corpora"]:
        out += [f"results/corpora/{c}/manifest.json", f"results/symbols/{c}.jsonl"]
    if sl["cells"]:
        out += [
            *(f"results/runs/{d}/{s}/{a}.json" for d, s, a in sl["cells"]),
            f"results/matrix/slices/{name}/phase-matrix.json",
            f"results/matrix/slices/{name}/phase-matrix.md",
        ]
    if sl["calls"]:
        out += [
            f"results/matrix/slices/{name}/callgraph.json",
            f"results/matrix/slices/{name}/callgraph.md",
        ]
    return out
