"""`crmatrix try`: one query to one system of the config, before a matrix runs it; the system
installed, its corpus fetched and indexed by the workflow in a temporary directory
(crmatrix.cli.workflow), its answer laid open (crmatrix.evaluation.trial)."""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.cli.matrix import config_path
from crmatrix.cli.run import one_system

# The plan's cell needs a dataset: one of no tasks (a file of none in the work directory, whose
# tasks are never made); the workflow makes the cell's other inputs.
DATASET = "try"
NO_TASKS = "crmatrix-try.json"
NOT_MADE = ("tasks", "grep", "dataset_file", "query_vectors")


def trial_matrix(args):
    """The config (default: config/config.yaml if present, else built-in defaults) narrowed to
    the system and the corpus: one of the config's corpora by name, or a directory (by its
    absolute path: the workflow runs elsewhere); the config the workflow runs, its Matrix, the arm."""
    from crmatrix import config, did_you_mean
    from crmatrix.config.yamlfile import read_yaml

    path = config_path(args)
    raw = (read_yaml(path) or {}) if path else {"arms": {"baseline": {}}}
    corpora = raw.get("corpora") or {}
    if args.corpus in corpora:
        corpus = args.corpus
        raw["corpora"] = {corpus: corpora[corpus]}
    elif Path(args.corpus).is_dir():
        corpus = Path(args.corpus).resolve().name
        raw["corpora"] = {corpus: {"path": str(Path(args.corpus).resolve()), "include": ["**"], "exclude": []}}
    else:
        raise CrmatrixError(f"--corpus {args.corpus!r} is neither a corpus of the config "
                            f"({did_you_mean(args.corpus, list(corpora))}known: {', '.join(corpora) or 'none'}) "
                            "nor a directory")
    raw.pop("repositories", None)
    raw["datasets"] = {DATASET: {"file": os.devnull, "corpus": corpus}}
    one_system(raw, args.system, [args.method] if args.method else None, "system")
    matrix = config.from_dict(copy.deepcopy(raw), str(path) if path else "built-in defaults")
    if matrix.corpora[corpus].kind != "fetched":
        raise CrmatrixError(f"--corpus {corpus!r} is a {matrix.corpora[corpus].kind} corpus: `crmatrix try` takes "
                            "a pinned corpus (git, pypi, npm, path) or a directory")
    arm = args.arm or matrix.baseline_arm
    if arm not in matrix.arms:
        raise CrmatrixError(f"--arm {arm!r} is not an arm of the config (known: {', '.join(matrix.arms)})")
    return raw, matrix, arm


def cmd_try(args) -> int:
    from crmatrix import atomic
    from crmatrix.cli import workflow
    from crmatrix.config.plan import Plan
    from crmatrix.evaluation import evaluate, trial
    from crmatrix.stages.evaluate_arm import system_context, system_guard
    from crmatrix.symbols import read_symbols
    from crmatrix.systems.mcp import UnlistedTool

    raw, matrix, arm = trial_matrix(args)
    sc = matrix.systems[args.system]
    method = args.method or sc.methods[0]
    cache_dir = Path(args.cache_dir or matrix.cache_dir).resolve()
    raw["cache_dir"] = str(cache_dir)
    with tempfile.TemporaryDirectory(prefix="crmatrix-try-") as tmp:
        work = Path(tmp)
        workflow.prepare(work, Path.cwd(), environments=sc.venv is not None)
        (work / NO_TASKS).write_text("[]\n")
        raw["datasets"][DATASET]["file"] = str(work / NO_TASKS)
        needed = Plan(matrix).cell(DATASET, args.system, arm).inputs
        workflow.make(raw, [f for k, v in needed.items() if k not in NOT_MADE
                            for f in ([v] if isinstance(v, str) else v)], work)
        cell = Plan(matrix, root=str(work / "results")).cell(DATASET, args.system, arm)  # the same files, from here
        i = cell.inputs
        symbols = read_symbols(Path(i["symbols"]))
        guard = system_guard(cell.spec.system)
        ctx = system_context(cell, Path(i["tree"]), atomic.read_json(Path(i["manifest"])), symbols, guard,
                             cache_dir, matrix.embed_threads)
        try:
            system = evaluate.start_system(cell.spec.system, ctx, guard)
        except UnlistedTool as e:  # the tools it does list are what the user needs to see
            print("\n".join(trial.render_tools(e.listed)))
            raise
        try:
            found = trial.ask(system, guard, symbols, args.query, method, args.k)
        finally:
            evaluate.stop_system(system, guard)
    print("\n".join(trial.render(found, args.system)))
    return 1 if found.failure is not None else 0
