"""The builtin's whole-file BM25 (method file-bm25, MTEB's files as documents) held to an
independent BM25 (tests/bm25_reference.py) on real SWE-bench tasks: flask's and requests's Lite
and Verified rows, each at its own commit, file Acc@1/3/5/10 task by task."""

import pytest
from bm25_reference import acc_at, rank_files
from conftest import SHARED, needs_shared

from crmatrix.corpora import pins
from crmatrix.datasets import swebench
from crmatrix.engine.engine import Engine
from crmatrix.engine.files import FileDocs, decode, document

REPOSITORIES = {"pallets/flask": "https://github.com/pallets/flask", "psf/requests": "https://github.com/psf/requests"}


@needs_shared
@pytest.mark.parametrize("repo", sorted(REPOSITORIES))
def test_whole_file_bm25_acc_at_k_is_the_reference_bm25s(repo, tmp_path):
    rows = {r.instance_id: r for split in ("lite", "verified")
            for r in swebench.read_rows(SHARED / "data" / "swe-bench" / f"{split}.jsonl") if r.repo == repo}
    store = tmp_path / "repo.git"
    bundles = pins.bundle_commits(REPOSITORIES[repo], [str(SHARED / "corpora")])
    pins.fetch_commits(sorted(set(bundles.values())), store)
    compared = 0
    for row in sorted(rows.values(), key=lambda r: r.instance_id):
        listing = pins.commit_files(store, row.base_commit, ["**/*.py"], [])
        blobs = pins.read_blobs(store, [f.blob for f in listing.files])
        files = {f.path: decode(blobs[f.blob]) for f in listing.files}
        engine = Engine([], files=FileDocs.build(files.items()))
        ours = [h.path for h in engine.search(row.problem_statement, "file-bm25", 10)]
        reference = rank_files({p: document(p, t) for p, t in files.items()}, row.problem_statement)
        gold = [f for f in swebench.gold_files(row.diffs) if f in files]
        for k in (1, 3, 5, 10):
            assert acc_at(ours, gold, k) == acc_at(reference, gold, k), (row.instance_id, k, ours[:k], reference[:k])
        compared += 1
    assert compared == {"pallets/flask": 4, "psf/requests": 13}[repo]
