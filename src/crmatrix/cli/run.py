"""`crmatrix run`: one evaluation of a directory and a dataset file, made by the workflow in a
temporary directory (crmatrix.cli.workflow): Snakemake is asked for the cell's run."""

from __future__ import annotations

import copy
import shutil
import tempfile
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.cli.matrix import config_path


def run_config(args, corpus: str, dataset: str):
    """The matrix config (arms, systems, models; default: config/config.yaml if present, else
    built-in defaults) with this run's corpus directory and dataset file as its only corpus
    and dataset (by their absolute paths: the workflow runs elsewhere), --methods and --top-k in
    place of the config's, and the cache directory (--cache-dir, else the config's) by its
    absolute path: the config the workflow runs, and its Matrix."""
    from crmatrix import config
    from crmatrix.config.yamlfile import read_yaml

    path = config_path(args)
    raw = (read_yaml(path) or {}) if path else {"arms": {"baseline": {}}}
    raw["corpora"] = {corpus: {"path": str(Path(args.corpus).resolve()), "include": args.include or ["**"],
                               "exclude": args.exclude or []}}
    raw["datasets"] = {dataset: {"file": str(Path(args.dataset).resolve()), "corpus": corpus, "format": args.format}}
    if args.top_k is not None:
        raw["top_k"] = args.top_k
    one_system(raw, args.system, args.methods.split(",") if args.methods else None, "--system")
    matrix = config.from_dict(copy.deepcopy(raw), str(path) if path else "built-in defaults")
    if args.arm not in matrix.arms:
        raise CrmatrixError(f"--arm {args.arm!r} is not an arm of the config (known: {', '.join(matrix.arms)})")
    raw["cache_dir"] = str(Path(args.cache_dir or matrix.cache_dir).resolve())
    return raw, matrix


def one_system(raw: dict, name: str, methods: list[str] | None, what: str) -> None:
    """`raw` (a config's contents) narrowed to the system `name` (default systems: the builtin)
    under `methods` (None: its own), for one job: the other systems, the datasets it names, the
    pairs and the matrix's headline method are no part of it. `what` names the system's option."""
    from crmatrix import did_you_mean

    systems = raw.get("systems") or {"builtin": {"type": "builtin"}}
    if name not in systems:
        raise CrmatrixError(f"{what} {name!r} is not a system of the config ({did_you_mean(name, list(systems))}"
                            f"known: {', '.join(systems)})")
    system = {k: v for k, v in systems[name].items() if k != "datasets"}
    if methods:
        system["methods"] = methods
    raw["systems"] = {name: system}
    for key in ("reference_system", "compare", "headline_method"):
        raw.pop(key, None)


def cmd_run(args) -> int:
    from crmatrix.cli import workflow
    from crmatrix.config.paths import Layout
    from crmatrix.datasets import derived
    from crmatrix.results.run import Run

    if args.format == derived.FORMAT:  # scored here on the corpus itself, its queries would be its own docs
        raise CrmatrixError(f"run: format {derived.FORMAT} is scored on the corpus's docs-withheld view, which the "
                            f"workflow makes: give a config a dataset {{format: {derived.FORMAT}, corpus: NAME}}")
    corpus, dataset = Path(args.corpus).resolve().name, Path(args.dataset).stem
    raw, matrix = run_config(args, corpus, dataset)
    target = Layout().file("run", dataset=dataset, system=args.system, arm=args.arm)
    with tempfile.TemporaryDirectory(prefix="crmatrix-run-") as tmp:
        work = Path(tmp)
        workflow.prepare(work, Path.cwd(), environments=matrix.systems[args.system].venv is not None)
        workflow.make(raw, [target], work)
        run = Run.read(work / target)
        if args.out:  # the run alone (its TREC files and tracking stay behind)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(work / target, args.out)
    print(f"{run.dataset} · {run.system} · {run.arm}")
    for method, res in run.methods.items():
        m = res.metrics
        print(f"  {method:<9} mrr {m['mrr']:.3f}  acc@1 {m['acc@1']:.3f}  acc@5 {m['acc@5']:.3f}  "
              f"ndcg@10 {m['ndcg@10']:.3f}  recall@10 {m['recall@10']:.3f}  p95 {res.latency_ms['p95']:.1f} ms  "
              f"n {m['n']}  errors {res.errors}")
    if args.out:
        print(f"wrote {args.out}")
    return 0
