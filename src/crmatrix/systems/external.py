"""What the `command` and `mcp` systems share: methods and tool calls named by the options,
the sandbox each runs in, the index command, and the mapping from an answer to hits.

A method is a named tool call: `options.tool` and `options.args` are the default, and
`options.methods` maps method names to overrides (`{ranked: {tool: search}, symbols: {tool:
find_symbol, args: {name: "{query}"}}}`); without it the one method is `search`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from crmatrix import CrmatrixError, atomic, integrity
from crmatrix.embed.models import read_model
from crmatrix.systems import codefiles, hitmap, isolation, sandbox, templates
from crmatrix.systems.answers import BLOB, Answer, QueryFailure, excerpt
from crmatrix.systems.base import System

DEFAULT_METHOD = "search"
STATIC = {"corpus", "index", "home", "bin"}  # known once per job
PER_QUERY = STATIC | {"query", "k", "tool", "args"}
INDEX_INFO = "crmatrix-index.json"
# The options holding templates: those the index job fills, and all of them.
INDEX_TEMPLATES = ("index", "env", "cwd")
# What an external system's index command depends on, besides the arm's variables.
INDEX_OPTIONS = ("index", "env", "pass_env", "cwd")
TEMPLATES = (*INDEX_TEMPLATES, "search", "batch", "server", "setup", "args", "methods")


def method_specs(options: dict) -> dict[str, dict]:
    """Method name -> its tool and args (the defaults, overridden per method)."""
    named = options.get("methods") or {DEFAULT_METHOD: {}}
    return {m: {"tool": spec.get("tool", options.get("tool")), "args": spec.get("args", options.get("args", {}))}
            for m, spec in named.items()}


def model_names(options: dict, index_only: bool = False) -> list[str]:
    """The config's models the options name as `{model:NAME}`: in the templates the index job
    fills (`index_only`), or in any of them."""
    keys = INDEX_TEMPLATES if index_only else TEMPLATES
    return sorted({name for k in keys for _, name in templates.model_uses(k, options.get(k))})


def model_uses(options: dict) -> list[tuple[str, str]]:
    """(option key, NAME) for each `{model:NAME}` of the options, for the config's checks."""
    return [u for k in TEMPLATES for u in templates.model_uses(k, options.get(k))]


def models_by_name(model_dirs: list[Path] | str | Path | None) -> dict[str, Path]:
    """Prepared model directories (results/models/NAME: one path, as Snakemake hands a named
    input of one file, or several) by the config's name of their model."""
    if isinstance(model_dirs, (str, Path)):
        model_dirs = [model_dirs]
    return {Path(p).name: Path(p) for p in model_dirs or []}


def models_provenance(model_dirs: dict[str, Path]) -> dict[str, dict]:
    """NAME -> what identifies the model the job was given (its model.json: sha256, source, ...),
    never where it lies."""
    out = {}
    for name, d in sorted(model_dirs.items()):
        meta = read_model(Path(d))
        out[name] = {k: meta[k] for k in ("backend", "source", "sha256", "quantize") if k in meta}
    return out


def static_values(corpus_dir: Path, index_dir: Path | None, home: Path, venv_dir: Path | None,
                  model_dirs: dict[str, Path] | None = None) -> dict[str, str]:
    """The placeholders known once per job; `bin` is the directory of the programs the
    system's own environment installed (empty without one); `{model:NAME}` each prepared model
    directory the job was given (`model_dirs`, NAME -> directory)."""
    return {"corpus": str(Path(corpus_dir).resolve()), "index": str(Path(index_dir).resolve()) if index_dir else "",
            "home": str(home), "bin": str(Path(venv_dir).resolve() / "bin") if venv_dir else "",
            **templates.model_values(model_dirs or {})}


def _given_models(options: dict, model_dirs: dict[str, Path] | None, index_only: bool, what: str) -> dict[str, Path]:
    """The model directories by name, each model the options name among them."""
    given = {n: Path(d) for n, d in (model_dirs or {}).items()}
    missing = [n for n in model_names(options, index_only) if n not in given]
    if missing:
        raise CrmatrixError(f"{what}: the options name {', '.join('{model:' + n + '}' for n in missing)}, but the "
                            f"job was given no such model directory (given: {', '.join(sorted(given)) or 'none'})")
    return given


def process_env(options: dict, values: dict[str, str], home: Path, arm_env: dict[str, str],
                venv_dir: Path | None, mirror: isolation.Mirror) -> tuple[dict[str, str], Path]:
    """The environment and working directory of the system's processes (see sandbox); git stops
    at the corpus mirror's root and at its HOME's (crmatrix.systems.isolation)."""
    fixed = {k: templates.fill_text(v, values) for k, v in options["env"].items()}
    env = sandbox.clean_env(home, options["pass_env"], fixed, arm_env, Path(venv_dir).resolve() if venv_dir else None,
                            ceilings=[mirror.ceiling(), Path(home).resolve().parent])
    cwd = Path(templates.fill_text(options["cwd"], values)) if options.get("cwd") else home
    return env, cwd


class ExternalSystem(System):
    """Base of the command and mcp adapters; subclasses add how a tool call is made."""

    SELF_TIMED = True
    CALL_KEY = ""  # the option holding the per-query argv template (command) or "" (mcp: a tool call)

    @classmethod
    def methods_for(cls, options: dict) -> tuple[str, ...]:
        return tuple(method_specs(options))

    @classmethod
    def needs_index(cls, spec) -> bool:
        return bool(spec.options.get("index"))

    @classmethod
    def index_env(cls, spec, env: dict[str, str]) -> dict[str, str]:
        """`options.index_env` lists the index-time arm variables; absent, every variable is,
        so an unlisted knob can never be missed by a shared index (at the cost of one per arm)."""
        names = spec.options.get("index_env")
        return dict(env) if names is None else {k: env[k] for k in names if k in env}

    @classmethod
    def index_spec(cls, spec, arm, language: str | None, models: dict) -> dict:
        """Its index command with the variables it sees under the arm (its environment is the
        plan's to add: `crmatrix.config.plan.Plan.index_key`); the contents of the project files
        and the definitions of the models its index command names, when it names any (absent
        otherwise, so such a system keeps its key; `models`: NAME -> the model's key, its
        definition with its files by their contents)."""
        options = spec.options
        out = {"type": spec.type,
               "options": {k: options.get(k) for k in INDEX_OPTIONS},
               "env": dict(sorted(cls.index_env(spec, arm.env).items()))}
        files = cls.code_files(options, index_only=True)
        if files:
            out["files"] = files
        named = {n: models[n] for n in cls.model_names(options, index_only=True)}
        if named:
            out["models"] = named
        return out

    @classmethod
    def index_conf(cls, spec, models: dict) -> dict:
        """The settings its index job runs with: index-time ones only, so a query-time change
        (`timeout_s`, `budget_s`, the search argv or tool) re-runs no index; and the definitions
        of the models its index command names (`models`: NAME -> the model's key)."""
        options = spec.options
        out = {"type": spec.type,
               "options": {k: options[k] for k in (*INDEX_OPTIONS, "index_env", "index_timeout_s") if k in options}}
        named = {n: models[n] for n in cls.model_names(options, index_only=True)}
        return {**out, "models": named} if named else out

    @classmethod
    def code_files(cls, options: dict, index_only: bool = False) -> dict[str, str]:
        argvs = {"index": options.get("index")} if index_only else cls.argvs(options)
        return codefiles.hashes(options, argvs)

    @classmethod
    def model_names(cls, options: dict, index_only: bool = False) -> list[str]:
        return model_names(options, index_only)

    @classmethod
    def installable(cls) -> bool:
        return True

    @classmethod
    def check_options(cls, options: dict) -> None:
        """Cross-key checks the schema cannot express; errors start with the option's key."""
        for key in ("env", "cwd", "index"):
            templates.check(key, options.get(key), STATIC)
        codefiles.check(options.get(codefiles.FILES_KEY, []))
        for method, spec in method_specs(options).items():
            where = "args" if method == DEFAULT_METHOD and not options.get("methods") else f"methods.{method}.args"
            templates.check(where, spec["args"], PER_QUERY - {"args"})
            if spec["tool"] is None and cls.needs_tool(options):
                raise CrmatrixError(f"tool: expected a tool name for method {method!r} "
                                    "(options.tool, or methods.NAME.tool)")
        if options["parser"] == hitmap.REGEX or "pattern" in options:
            problem = hitmap.check_pattern(options.get("pattern"))
            if problem:
                raise CrmatrixError(f"pattern: {problem}")
        if not options.get("index"):
            for key in ("env", "cwd", "args", "methods", cls.CALL_KEY, "server", "setup", "batch"):
                if key and templates.uses(options.get(key), "index"):
                    raise CrmatrixError(f"{key}: uses {{index}}, but there is no index command "
                                        "(expected options.index)")

    @classmethod
    def needs_tool(cls, options: dict) -> bool:
        return True

    @classmethod
    def argvs(cls, options: dict) -> dict[str, list | None]:
        """Every argv template the system runs, by its option's key (None: not given)."""
        return {"index": options.get("index")}

    @classmethod
    def check_programs(cls, spec) -> None:
        """Each program the system runs is on this host's PATH (or at its absolute path), so a
        missing one stops `crmatrix validate`, not the first query. Not checked: one the workflow
        installs (`install:`), one a placeholder names, one relative to the system's `cwd`."""
        if spec.install is not None:
            return
        for key, argv in cls.argvs(spec.options).items():
            program = argv[0] if argv else None
            if program is None or templates.names(program) or (os.sep in program and not os.path.isabs(program)):
                continue
            if shutil.which(program) is None:
                raise CrmatrixError(f"options.{key}[0]: {program!r} is not a program on PATH, and the system "
                                    "installs nothing (expected an executable on PATH, its absolute path, or "
                                    "install: {pip: NAME==VERSION})")

    def __init__(self, ctx):
        if ctx.index_dir is not None:  # before anything is started or made for the job
            integrity.verify(ctx.index_dir)
        super().__init__(ctx)
        self.options = ctx.options
        self.RESPONSE = self.options["response"]
        self._tmp = None
        if ctx.home_dir is None:  # outside the workflow: a private HOME for this job only
            self._tmp = tempfile.TemporaryDirectory(prefix=f"crmatrix-{ctx.name or 'system'}-home-")
        self.home = Path(ctx.home_dir if ctx.home_dir is not None else self._tmp.name).resolve()
        self.home.mkdir(parents=True, exist_ok=True)
        self.model_dirs = _given_models(self.options, ctx.system_models, False, f"systems.{ctx.name or 'system'}")
        self.mirror = isolation.Mirror(ctx.corpus_dir, ctx.name)
        self.values = static_values(self.mirror.path, ctx.index_dir, self.home, ctx.venv_dir, self.model_dirs)
        self.env, self.cwd = process_env(self.options, self.values, self.home, ctx.env, ctx.venv_dir, self.mirror)
        self.specs = method_specs(self.options)
        self.table = hitmap.SymbolTable(ctx.symbols, ctx.corpus_dir, self.mirror.path)

    def provenance(self) -> dict:
        """The models it was given, by their hashes (none: nothing)."""
        models = models_provenance(self.model_dirs)
        if not models:
            return {}
        return {"models": models, **({"model": next(iter(models.values()))} if len(models) == 1 else {})}

    def call_values(self, method: str, query: str | None, k: int) -> dict[str, Any]:
        """Placeholder values for one call of `method` (`query` None in a batch call)."""
        spec = self.specs[method]
        values = {**self.values, "k": k, "tool": spec["tool"] or ""}
        if query is not None:
            values["query"] = query
        values["args"] = templates.fill_args(spec["args"], values)
        return values

    def parse(self, text: str) -> Any:
        return hitmap.parse(text, self.options["parser"], self.options.get("pattern"))

    def answer(self, value: Any, raw: str, k: int) -> Answer:
        """Hits from a parsed answer, with the raw answer's first bytes; a blob system also keeps
        the text an agent would read."""
        pairs = hitmap.resolve_hits(hitmap.select(value, self.options["hits"]), self.options["fields"], self.table,
                                    k, self.options.get("pathless", "fail"))
        hits, kept = [h for _, h in pairs], {"raw": raw, "answered": [a for a, _ in pairs]}
        if self.RESPONSE != BLOB:
            return Answer(hits, excerpt=excerpt(raw), **kept)
        text = raw
        if self.options.get("blob"):
            text = hitmap.get(value, self.options["blob"])
            if not isinstance(text, str):
                raise QueryFailure("bad-output", f"blob path {self.options['blob']!r}: no text in the answer")
        return Answer(hits, text, excerpt(raw), **kept)

    def close(self) -> None:
        """After its processes stopped: its temporary HOME goes, and a write into its corpus
        stops the job (crmatrix.systems.isolation)."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        mirror, self.mirror = self.mirror, None
        if mirror is not None:  # the job's error names the system (crmatrix.evaluation.cell.named_errors)
            mirror.check()


def build_index(spec, *, corpus_dir: Path, env: dict[str, str], out: Path, home_dir: Path,
                name: str = "", venv_dir: Path | None = None, model_dirs: dict[str, Path] | None = None) -> dict:
    """Run the system's index command (`spec`: its `SystemSpec`, as `index_conf` gives it) once for
    (corpus, index-time env) into `out`; `model_dirs`:
    the prepared models its `{model:NAME}` placeholders name (NAME -> directory).

    The tool writes straight into `out` (not a staged copy renamed afterwards), since many
    tools record absolute paths inside their index; a failed build removes `out`, and so does
    one that wrote into its corpus (crmatrix.systems.isolation), which also stops the job.
    """
    options, out, home = spec.options, Path(out).resolve(), Path(home_dir).resolve()
    label = name or spec.type
    model_dirs = _given_models(options, model_dirs, True, f"systems.{label}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    mirror = isolation.Mirror(corpus_dir, name)
    values = static_values(mirror.path, out, home, venv_dir, model_dirs)
    index_vars = ExternalSystem.index_env(spec, env)
    run_env, cwd = process_env(options, values, home, index_vars, venv_dir, mirror)
    argv = templates.fill_argv(options["index"], values)
    t0 = time.perf_counter()
    failed = None
    try:
        stdout = sandbox.run(argv, env=run_env, cwd=cwd, timeout_s=options["index_timeout_s"], what="index")
    except QueryFailure as e:
        failed = e
    try:  # a write into its corpus is the first thing to tell, even of a command that then failed
        mirror.check(f"{spec.type} system {label!r}: its index command")
    except CrmatrixError:
        shutil.rmtree(out, ignore_errors=True)
        raise
    if failed is not None:
        shutil.rmtree(out, ignore_errors=True)
        raise CrmatrixError(f"systems.{label}: index command failed ({failed.kind}): {failed}")
    info = {"argv": options["index"], "env": dict(sorted(index_vars.items())),
            "seconds": round(time.perf_counter() - t0, 3), "stdout_tail": stdout[-2000:]}
    models = models_provenance({n: model_dirs[n] for n in model_names(options, index_only=True)})
    if models:  # absent when none, as in the index info written before models could be named
        info["models"] = models
    atomic.write_json(out / INDEX_INFO, info)
    integrity.record(out)
    return info
