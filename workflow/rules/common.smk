# The config read once into a typed Matrix (crmatrix.config) and its plan of the DAG
# (crmatrix.config.plan): every input function, target and parameter of the rules is the plan's
# answer. Everything a job depends on is handed to it as input or params from there, never
# read from `config` inside a script; what it does not depend on (where mirrors, registries
# and caches are) goes by environment.
import inspect
import os
import re
import sys
from pathlib import Path

from crmatrix import CrmatrixError, atomic, codehash
from crmatrix import config as crconfig
from crmatrix.config import check as crcheck
from crmatrix.config.plan import Plan
from crmatrix.datasets import ledger
from crmatrix.embed.models import keep_hashes_in
from crmatrix.pipeline import locations, rescoring, scheduling, shell_job
from crmatrix.pipeline.warm import starter as warm
from crmatrix.pipeline import slices as crslices
from crmatrix.plots import names as plot_names
from crmatrix.plots import runtime as plot_runtime
from crmatrix.systems import install

# Model files' hashes by each file's stat, so that a planning hashes only a model whose files
# changed; planning's own state, as CODE_MEMO below.
keep_hashes_in(Path(".snakemake") / "crmatrix" / "model-hashes.json")
# The file(s) the config was read from, for its errors and warnings.
CONFIG_SOURCE = ", ".join(map(str, workflow.configfiles)) or "config"
try:
    MATRIX = crconfig.from_dict(config, source=CONFIG_SOURCE)
    crcheck.files(MATRIX)
    PLAN = Plan(MATRIX)
except CrmatrixError as e:
    sys.exit(f"crmatrix: {e}")

for _warning in crconfig.clamp_warnings(
    MATRIX
):  # valid, but an arm measures another value
    print(f"crmatrix: warning: {CONFIG_SOURCE}: {_warning}", file=sys.stderr)
locations.export(MATRIX)
install.export_sources(
    {s: c.spec.install for s, c in MATRIX.systems.items() if c.spec.install}
)
# force_test changes no result: it reaches the jobs as a variable, never as a param
ledger.export(MATRIX.force_test)


SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"
# The interpreter and the scripts a `light` command starts, named by the environment: a rule's
# shell command is Snakemake's code trigger, so a path written in it would rerun every job of a
# moved checkout or venv. (Set wherever the Snakefile runs: on a cluster, in each job's too.)
os.environ["CRMATRIX_PYTHON"] = sys.executable
os.environ["CRMATRIX_SCRIPTS"] = str(SCRIPTS)


envvars:
    *locations.VARS,
    ledger.FORCE_VAR,
    "CRMATRIX_PYTHON",
    "CRMATRIX_SCRIPTS",


DATASETS = MATRIX.retrieval_datasets
SYSTEMS = sorted(MATRIX.systems)
BASELINE = MATRIX.baseline_arm
SYSTEM_DATASETS = PLAN.system_datasets
PLAIN_DATASETS = sorted(
    set(MATRIX.datasets) - set(MATRIX.split_datasets) - set(MATRIX.localized_datasets)
)
# corpora of one tree each (not a repository of many commits, repositories.smk)
TREE_CORPORA = sorted(set(MATRIX.corpora) - set(MATRIX.corpora_of("repository")))
# dataset -> its structural split: the matrix and the forests pool such a dataset apart
DATASET_SPLITS = {d: MATRIX.datasets[d].derived_split for d in MATRIX.split_datasets}


# Where each kind of file lies (crmatrix.config.paths), the table the plan formats too: a rule's
# output is its kind's template, the fields it does not give left as wildcards.
PATHS = PLAN.paths


def layout(kind, **fixed):
    """The template of a kind of file, the fields not given left as wildcards (`{name}`)."""
    return PATHS.pattern(kind, **fixed)


wildcard_constraints:
    corpus="[^/]+",
    dataset="[^/]+",
    system="[^/]+",
    arm="[^/]+",
    model="[^/]+",
    index_key="[0-9a-f]{12}",
    install_key="[0-9a-f]{12}",


# The imports of each module by a hash of its text, so planning parses only edited modules
# (the Snakefile saves it once every rule has asked for its code's hash); planning's own state,
# kept beside Snakemake's in the working directory, never among the results.
CODE_MEMO = codehash.Memo(Path(".snakemake") / "crmatrix" / "codehash-imports.json")


def code(rule_name):
    """A hash of the library code the rule's script runs (Snakemake's own code trigger sees
    the thin script only), so editing a module re-runs exactly the stages that import it.
    """
    return codehash.stage_hash(SCRIPTS / f"{rule_name}.py", CODE_MEMO)


def light(rule_name):
    """The shell command that starts a script as plain Python (crmatrix.pipeline.shell_job), for
    the rules of hundreds of short jobs. The interpreter is the one running Snakemake, as with
    `script:`, minus its preamble that imports Snakemake in each job (0.08-0.14 s of a job's
    CPU). The arguments: the job's log, its files (the params entry `files`: `job_files`) and its
    other parameters (the entry `args`: `job_args`). In a local run the script hands its job to
    a warm server (`start_warm`).
    """
    LIGHT_SCRIPTS.add(SCRIPTS / f"{rule_name}.py")
    return f'"$CRMATRIX_PYTHON" "$CRMATRIX_SCRIPTS/{rule_name}.py" {{log:q}} {{params.files:q}} {{params.args:q}}'


# the scripts of the `light` rules, which a local run's warm server imports once (start_warm)
LIGHT_SCRIPTS = set()


def start_warm():
    """Run before any job (the Snakefile's onstart): in a local run, a server that has imported
    the light scripts' modules starts their jobs (crmatrix.pipeline.warm), logging to
    logs/warm-server.log; CRMATRIX_WARM=0 turns it off."""
    warm.start(workflow.local_exec, sorted(LIGHT_SCRIPTS), Path("logs/warm-server.log"))


def job_files(wildcards, input, output):
    """The params entry `files` of a `light` job: its files and wildcards, as one JSON argument."""
    return shell_job.files(
        dict(input.items()), dict(output.items()), output, dict(wildcards.items())
    )


def job_args(**params):
    """The params entry `args` of a `light` job: `params` (each a value, or a function of the
    wildcards) as one JSON argument, which Snakemake's params trigger compares."""
    return lambda wc: shell_job.parameters(
        {k: v(wc) if callable(v) else v for k, v in params.items()}
    )


def by(answer, *names):
    """An input or params function: the plan's `answer` to these wildcards' values."""
    return lambda wc: answer(*(getattr(wc, n) for n in names))


def cell(wildcards):
    """The plan of an evaluation cell (crmatrix.evaluation.cell.CellJob): what `crmatrix run` builds too."""
    return PLAN.cell(wildcards.dataset, wildcards.system, wildcards.arm)


def sign_functions(rules):
    """Each input and params function of `rules` with its signature made once: Snakemake asks
    `inspect.signature` which arguments to pass at every call (thousands per planning), and a
    function's `__signature__` is the answer without working it out again."""
    for r in rules:
        for item in [*r.input, *r.params]:
            # an unpack()ed function comes wrapped in a flagged string
            func = getattr(item, "callable", item)
            if callable(func) and not hasattr(func, "__signature__"):
                func.__signature__ = inspect.signature(func)


def one_of(names):
    """A wildcard pattern matching exactly these names (none: nothing)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def home_dir(wildcards):
    """An external system's own HOME for its index, shared with the query jobs reading it."""
    where = {k: v for k, v in wildcards.items() if k != "system"}
    return PLAN.home_dir(wildcards.system, where)


def refuse_rescoring(dag):
    """Run before any job (the Snakefile's onstart), so before Snakemake removes a run it
    would replace: a planned scoring of a test split the ledger holds is refused here.
    """
    jobs = list(dag.needrun_jobs())
    planned = [
        rescoring.Planned(
            run=job.output.run,
            dataset=job.wildcards.dataset,
            split=params["split"]["split"],
            dataset_file=Path(job.input.dataset_file),
            system_conf=dict(params["system_conf"]),
            env=dict(params["env"]),
            model_dir=Path(job.input.model) if job.input.get("model") else None,
        )
        for job in jobs
        if job.rule.name == "evaluate_arm"
        for params in [cell(job.wildcards).params]
    ]
    try:
        rescoring.refuse(
            planned, {Path(f) for job in jobs for f in job.output}, ledger.forced()
        )
    except CrmatrixError as e:
        sys.exit(f"crmatrix: {e}")


# Snakemake's lock files (.snakemake/locks) say which files are locked, not by whom: the run
# that holds the lock writes its PID beside them, so that `make run` can tell a live run from
# a killed one (see the Makefile). Releasing the lock removes the directory, and the file with it.
LOCK_OWNER = Path(".snakemake/locks/crmatrix-owner.pid")


def record_lock_owner():
    """Run once the lock is taken (the Snakefile's onstart); with --nolock there is none to own."""
    if LOCK_OWNER.parent.is_dir():
        atomic.write_text(LOCK_OWNER, f"{os.getpid()}\n")


# The charts (plots.smk) and their report entries.
ROW_CHART_GROUPS = PLAN.row_chart_groups
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
# The Vega runtime every chart's HTML loads (crmatrix.plots.runtime), written once.
PLOT_RUNTIME = PATHS.file("plot_runtime", file=plot_runtime.PATH.as_posix())
# The processes a system's row charts are drawn in, at most (plots.smk's plot_rows): a fourth of
# the seed matrix's 48 charts each, on a machine with the cores for them.
PLOT_ROW_THREADS = 4


def chart_report(stem):
    """A chart's SVG (`stem`: kind/..., wildcards allowed), flagged for the report under its
    kind's category and caption, a subcategory per system."""
    kind, *parts = stem.split("/")
    labels = {"chart": kind, **dict(zip(("system", "subject"), parts))}
    # (a line must not start with `report`: Snakemake's parser would read its directive)
    svg = report(
        layout("chart", stem=stem, ext="svg"),
        caption=f"../report/{kind}.rst",
        category=PLOT_CATEGORIES[kind],
        subcategory=parts[0] if len(parts) > 1 else None,
        labels=labels,
    )
    return svg


def chart_captions(*kinds):
    """The captions of the kinds a job draws (its report captions read them from its params)."""
    return {k: plot_names.CAPTIONS[k] for k in kinds}


# What each family of charts draws from (plots.smk). A family whose chart shows every arm of a
# row or of the matrix (a new arm is a new bar, column or point) reads the phase matrix, which
# changes with any run; a family of a few arms reads their cells alone (results/cells, which
# change only with their runs and the baseline's), so an added arm leaves its charts be.
MATRIX_STATS = [PATHS.file("matrix", ext="json")]


def matrix_outputs():
    """What `all` builds: the phase matrix, its charts and the Vega runtime their HTML loads, the
    release/candidate gate, every run and its tracking, each dataset's audit, and the call-graph
    table when the config has edge datasets. The runs are named themselves: Snakemake plans a
    missing file only for a target or a job that runs anyway, so a run a failed job removed
    would otherwise stay missing under a matrix that still shows it.
    """
    out = [
        *PLAN.run_files(),
        PATHS.file("matrix", ext="json"),
        PATHS.file("matrix", ext="md"),
        PATHS.file("gallery"),
        PLOT_RUNTIME,
        PATHS.file("gate", ext="json"),
        PATHS.file("gate", ext="txt"),
        *PLAN.tracking_files(),
        *PLAN.audit_files(),
    ]
    if PLAN.callgraph_files():
        out += [PATHS.file("callgraph_table", ext=e) for e in ("json", "md")]
    return out


# The slices (crmatrix.pipeline.slices): a target per dataset, per corpus and per arm (slices.smk).
SLICES = crslices.slices(MATRIX)
