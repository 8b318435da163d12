"""localize_tasks: one repository's rows of a per-task-commit dataset (swe-bench), or the commits
of its history that a history dataset's rules keep (crmatrix.datasets.history, read from the
store's history), each localized at its own commit of the repository's store
(crmatrix.datasets.swebench), as tasks, TREC qrels and a summary of what was dropped and why,
and of the candidate rule (a gold file it leaves out stays gold: parsed here, since the store
holds candidates only)."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, versions
from crmatrix.corpora import candidates
from crmatrix.corpora.languages import language_for
from crmatrix.corpora.pins.gitstore import BlobReader
from crmatrix.datasets import history, relevance, swebench
from crmatrix.datasets.tasks import Task
from crmatrix.evaluation import trec
from crmatrix.stages.prepare_dataset import write_summary
from crmatrix.symbols.extract import extract_source
from crmatrix.versions.repository import GIT, MANIFEST, commit_files, outside_files
from crmatrix.versions.store import SymbolStore


def run(*, file: Path | None, repository: Path, store: Path, corpus: str, repo: str, level: str, out: Path,
        qrels: Path, summary: Path, tasks: str = swebench.ALL_TASKS, options: dict | None = None) -> list[Task]:
    """`corpus`: the repository corpus's name (each task's corpus is its version at the task's
    commit, `crmatrix.versions.corpus_of`); `repo`: its `owner/name` as the rows spell it; `level`:
    files or functions (the gold, swebench.FILES / FUNCTIONS); `tasks`: all of them, or those
    that edit a function (swebench.SUBSETS); `options`: a history dataset's
    (`history.Options`), whose rows come from the store's history (it has no `file`)."""
    if options is None:
        rows, derived = [r for r in swebench.read_rows(Path(file)) if r.repo == repo], []
    else:
        rows, derived = history.derive(Path(repository) / GIT, repo, history.Options.from_conf(options))
    commits = commit_files(repository)
    paths = {c: {p for p, _ in files} for c, files in commits.items()}
    blobs = {c: dict(files) for c, files in commits.items()}
    symbols = SymbolStore(Path(store))

    # the files the candidate rule leaves out: no symbols stored, so a gold one is parsed here
    outside = outside_files(repository)

    def base_file(commit: str, path: str) -> tuple[list, str]:
        if path in blobs[commit]:
            return symbols.symbols_in(commit, {path}), reader.read(blobs[commit][path]).decode("utf-8", "replace")
        data = reader.read(outside[commit][path])
        return extract_source(data, path, language_for(path)), data.decode("utf-8", "replace")

    with BlobReader(Path(repository) / GIT) as reader:
        found, drops = swebench.localize(
            sorted(rows, key=lambda r: (r.base_commit, r.row)), {repo}, lambda _, c: paths.get(c),
            lambda _, c, p: base_file(c, p), lambda _, c: outside.get(c, {}))
    rule = atomic.read_json(Path(repository) / MANIFEST).get("candidates", candidates.ALL)
    loaded = swebench.tasks(sorted(found, key=lambda loc: loc.row), level,
                            lambda _, c: versions.corpus_of(corpus, c), sorted(derived + drops, key=lambda d: d["row"]),
                            rule, tasks)
    if options is not None:
        loaded = history.mark_leaky(loaded, found)
    atomic.write_jsonl(Path(out), [t.to_dict() for t in loaded.tasks])
    # file gold names its files; function gold, the definitions of each task's own commit, which
    # lie in the files its spans name
    judged: dict[str, list[str]] = {}
    for commit, group in by_commit(loaded.tasks).items():
        spans = {span[0] for t in group for span in t.gold["definitions"]} if level == swebench.FUNCTIONS else ()
        judged.update(relevance.qrels(group, symbols.symbols_in(commit, spans) if spans else []))
    trec.write_qrels(Path(qrels), {t.task_id: judged[t.task_id] for t in loaded.tasks})
    write_summary(Path(summary), loaded, swebench.FORMAT if options is None else history.FORMAT)
    return loaded.tasks


def by_commit(tasks: list[Task]) -> dict[str, list[Task]]:
    """The tasks grouped by the commit their corpus names, in order of first appearance."""
    out: dict[str, list[Task]] = {}
    for t in tasks:
        out.setdefault(versions.commit_of(t.corpus), []).append(t)
    return out
