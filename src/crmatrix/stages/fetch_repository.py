"""fetch_repository: every commit of a repository corpus (`repositories:`) from the mirrors'
bundles into one bare repository, and what each commit holds as the corpus's globs select it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora import candidates
from crmatrix.corpora.languages import language_for
from crmatrix.corpora.pins import gitstore
from crmatrix.corpora.tree import content_skip_reason
from crmatrix.versions.repository import COMMITS, GIT, MANIFEST, OUTSIDE


def run(name: str, corpus: dict, out: Path, mirrors: list[str]) -> dict:
    """`corpus`: the repository's entry (git, include, exclude, language), the `commits` its
    datasets' rows name that a mirror holds, its `repository` (owner/name, which SweRank's rule
    and the builtin's swerank-bm25 read; the manifest records it) and its datasets' `candidates`
    rule (default all): the files the rule leaves out are listed apart (OUTSIDE), not indexed.
    With `history: true` (a history dataset's repository, crmatrix.datasets.history) the commits
    come from its history bundle, whose whole history the store keeps. The output appears whole
    or not at all."""
    commits = corpus["commits"]
    where = f"corpora.{name}"
    include, exclude = corpus.get("include") or ["**"], corpus.get("exclude") or []
    rule = candidates.check(corpus.get("candidates", candidates.ALL), f"{where}.candidates")
    with atomic.staged_dir(Path(out)) as d:
        if corpus.get("history"):
            _fetch_history(where, corpus["git"], commits, d / GIT, mirrors)
        else:
            bundles = gitstore.bundle_commits(corpus["git"], mirrors)
            _none_missing(where, commits, [c for c in commits if c not in bundles],
                          f"in no mirror's bundle of {corpus['git']}", mirrors)
            gitstore.fetch_commits(sorted({bundles[c] for c in commits}), d / GIT)
        listing = {c: gitstore.commit_files(d / GIT, c, include, exclude) for c in commits}
        # a source file's bytes decide it too, as select_files decides of a checkout: each distinct
        # blob read once (binary, not UTF-8)
        blobs = sorted({f.blob for lst in listing.values() for f in lst.files if language_for(f.path)})
        with gitstore.BlobReader(d / GIT) as reader:
            unfit = {b: why for b in blobs if (why := content_skip_reason(reader.read(b)))}
        sources = {c: [f for f in lst.files if language_for(f.path) and f.blob not in unfit]
                   for c, lst in listing.items()}
        keep = candidates.keeper(rule, corpus.get("repository"))
        files = {c: [[f.path, f.blob, f.size] for f in fs if keep(f.path)] for c, fs in sources.items()}
        atomic.write_json(d / COMMITS, files)
        atomic.write_json(d / OUTSIDE, {c: [[f.path, f.blob] for f in fs if not keep(f.path)]
                                        for c, fs in sources.items()})
        # the languages of the distinct files: the corpus's dominant one decides auto gating
        distinct = {(p, b) for fs in files.values() for p, b, _ in fs}
        languages = dict(sorted(Counter(language_for(p) for p, _ in distinct).items()))
        # the rule in the pin too: every run's provenance names the corpus by it
        manifest = {"corpus": name, "pin": {"kind": "git", "git": corpus["git"], "commits": commits,
                                            "candidates": rule},
                    "content_hash": atomic.hash_obj(files), "include": include, "exclude": exclude,
                    "candidates": rule, "repository": corpus.get("repository"),
                    "outside_candidates": sum(len(fs) for fs in sources.values()) - sum(map(len, files.values())),
                    "languages": languages, "commits": len(commits), "files": sum(map(len, files.values())),
                    "distinct_files": len(distinct),
                    "skipped": sum(len(lst.skipped) for lst in listing.values()),
                    "skipped_by_content": dict(sorted(Counter(unfit.values()).items()))}
        atomic.write_json(d / MANIFEST, manifest)
    return manifest


def _fetch_history(where: str, url: str, commits: list[str], dest: Path, mirrors: list[str]) -> None:
    bundle = gitstore.history_bundle(url, mirrors)
    if bundle is None:
        raise CrmatrixError(f"{where}: no mirror holds a history bundle of {url} "
                            f"({gitstore.bundle_stem(url)}@{gitstore.HISTORY_STEM}.bundle; mirrors: "
                            f"{', '.join(mirrors) or 'none'})")
    gitstore.fetch_commits([], dest, history=bundle)
    held = set(gitstore.has_commits(dest, commits))
    _none_missing(where, commits, [c for c in commits if c not in held], f"not in the history of {bundle}",
                  mirrors)


def _none_missing(where: str, commits: list[str], missing: list[str], why: str, mirrors: list[str]) -> None:
    if missing:
        raise CrmatrixError(f"{where}: {len(missing)} of its {len(commits)} commits are {why} (the first: "
                            f"{missing[0]}; mirrors: {', '.join(mirrors) or 'none'})")
