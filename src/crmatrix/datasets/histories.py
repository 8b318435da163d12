"""A history dataset (crmatrix.datasets.history) resolved, its format's `per_commit` hook: the
`repositories:` entry it names becomes its corpus, its history bundle its file (what a run's
provenance hashes), its options and candidate rule are filled in, and the parents of the
commits its rules keep are the versions its repository corpus must hold — so the history is
read while the config is resolved, as a swe-bench dataset's rows are.

Reading a history takes a second or two (a fetch of the bundle into a scratch repository and
two `git log`s); the commits it gives are kept under the cache directory, keyed by the bundle
(its path, size and time), the options and the rules' code, so a planning after the first
reads none.

Its candidate files (`candidates:`, crmatrix.corpora.candidates) are `language` by default: a
history's gold is the non-test source files by its language's conventions (crmatrix.corpora.
testfiles), and that rule ranks exactly those, so no gold file is ever outside them. `all`
(tests ranked too, as distractors no gold names) is the one other rule it takes; the field's
rules (agentless, swerank, locagent) are Python's conventions, which would leave a gold file
out (swerank: `src/latest.rs`) or rank another language's tests, so they are refused.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora import candidates, languages, testfiles
from crmatrix.corpora.pins import gitstore
from crmatrix.datasets import history, patches
from crmatrix.datasets.registry import PerCommit, Resolving

if TYPE_CHECKING:
    from crmatrix.config.entries import DatasetEntry

CACHE = "history"  # under the cache directory: one JSON of parent commits per history and options
RULES = (candidates.LANGUAGE, candidates.ALL)  # the candidate rules a history dataset takes, its default first


def per_commit(name: str, entry: DatasetEntry, resolving: Resolving) -> PerCommit:
    """Dataset `name` resolved (the format's `per_commit` hook): on the `repositories:` entry it
    names, at the parent commits of its tasks, fetched from the entry's history bundle."""
    where = f"datasets.{name}"
    key = entry.repository
    if key not in resolving.repositories:
        raise CrmatrixError(f"{where}.repository: {key!r} is not an entry of repositories: "
                            f"(known: {', '.join(sorted(resolving.repositories)) or 'none'})")
    if entry.corpus is not None or entry.file is not None:
        raise CrmatrixError(f"{where}: a history dataset names its repository (repository:), not a corpus or file")
    opts = history.Options.from_conf(entry.history, f"{where}.history")
    rule = candidates.check(entry.candidates or RULES[0], f"{where}.candidates")
    if rule not in RULES:
        raise CrmatrixError(f"{where}.candidates: {rule!r}: a history dataset ranks its language's source files "
                            f"without tests ({RULES[0]}, the default: its gold is drawn from them) or all of them "
                            f"({RULES[1]}); {rule} is a Python benchmark's rule")
    url, repo = resolving.repositories[key].git, resolving.repositories[key].name
    mirrors = list(resolving.mirrors)
    bundle = gitstore.history_bundle(url, mirrors)
    if bundle is None:
        raise CrmatrixError(f"{where}: no mirror holds a history bundle of {url} ({gitstore.bundle_stem(url)}@"
                            f"{gitstore.HISTORY_STEM}.bundle; mirrors: {', '.join(mirrors) or 'none'})")
    parents = _parents(bundle, repo, opts, resolving.cache_dir)
    if not parents:
        raise CrmatrixError(f"{where}: the rules keep no commit of {bundle} (options: {opts.to_conf()})")
    resolved = {k: v for k, v in entry.conf.items() if k != "history"}
    language = resolving.repositories[key].language
    # the histories of one language pool in the matrix (crmatrix.analysis.matrix.rollups.pooled_benchmarks)
    corpus = candidates.store(key, rule, RULES[0])
    # no file: its rows come from the store's history (rule localize_tasks), never from where the
    # bundle lies, so the plan is the same on every machine that has it
    return PerCommit({name: {**resolved, "corpus": corpus, "repository": repo,
                             "history": opts.to_conf(), "candidates": rule}},
                     {corpus: set(parents)}, fetch={"history": True},
                     pooled_as=f"{history.FORMAT}-{language}" if language else None)


def _parents(bundle: Path, repo: str, opts: history.Options, cache_dir: str | None) -> list[str]:
    stat = bundle.stat()
    code = b"".join(Path(m.__file__).read_bytes() for m in (history, patches, testfiles, languages))
    key = atomic.hash_obj({"bundle": str(bundle.resolve()), "size": stat.st_size, "mtime": stat.st_mtime_ns,
                           "repo": repo, "options": opts.to_conf(), "code": hashlib.sha256(code).hexdigest()})
    cached = Path(cache_dir) / CACHE / f"{key}.json" if cache_dir else None
    if cached is not None and cached.is_file():
        return json.loads(cached.read_text())
    with tempfile.TemporaryDirectory(prefix="crmatrix-history-") as tmp:
        git_dir = Path(tmp) / "git"
        gitstore.git(["init", "-q", "--bare", git_dir], f"{bundle}: git init")
        gitstore.fetch_history(bundle, git_dir)
        rows, _ = history.derive(git_dir, repo, opts)
    parents = sorted({r.base_commit for r in rows})
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_json(cached, parents)
    return parents
