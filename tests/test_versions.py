"""A corpus as a store of versions (crmatrix.versions): the builtin opens a version one way
(crmatrix.versions.engines), whatever the store holds, and a repository's commit searched through
it answers exactly as the builtin on a plain corpus of that commit's tree."""

import json

import pytest
from test_versioned import COMMITS, OFF, QUERIES, encode_queries, model, plain_symbols, store  # noqa: F401

from crmatrix import CrmatrixError, versions
from crmatrix.engine import index, knobs
from crmatrix.engine.methods import FUNCTION_METHODS, METHODS
from crmatrix.systems.builtin import BuiltinSystem
from crmatrix.systems.registry import SystemContext
from crmatrix.versions import engines
from crmatrix.versions import index as versioned

MANIFEST = {"languages": {"python": 7}, "repository": "owner/pkg"}
ASKED = METHODS + FUNCTION_METHODS


def answers(system) -> str:
    return json.dumps({f"{m}: {q}": [h.to_dict() for h in system.search(q, m, 100)] for m in ASKED for q in QUERIES})


@pytest.fixture
def encoded(monkeypatch):
    """Queries embedded by the test's bag of words, as the model's (no model loaded)."""
    monkeypatch.setattr(engines, "_encoder", lambda ctx, meta: encode_queries)


def test_a_repositorys_commit_answers_as_the_builtin_on_a_plain_corpus_of_that_commit(
        store, model, encoded, tmp_path):  # noqa: F811
    model_dir, _ = model
    kn = knobs.resolve(OFF, "python")
    versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "rindex" / versioned.SYMBOL_INDEX)
    repo = BuiltinSystem(SystemContext(tmp_path, MANIFEST, [], OFF, store_dir=store.directory,
                                       index_dir=tmp_path / "rindex", model_dir=model_dir, methods=ASKED))
    assert isinstance(repo.versions, engines.CommitVersions) and repo.engine is None  # each commit's, when asked
    repo.prepare(QUERIES)
    for commit in sorted(COMMITS):
        symbols = plain_symbols(commit, tmp_path)
        index.build(symbols, kn, model_dir, tmp_path / "cache", tmp_path / f"plain-{commit}")
        plain = BuiltinSystem(SystemContext(tmp_path / "trees" / commit, MANIFEST, symbols, OFF,
                                            index_dir=tmp_path / f"plain-{commit}", model_dir=model_dir,
                                            methods=ASKED))
        assert isinstance(plain.versions, engines.OneVersion)
        plain.prepare(QUERIES)
        assert list(repo.select(versions.corpus_of("pkg", commit))) == symbols
        assert plain.select("pkg") is symbols  # one version: the job's symbols
        got, want = answers(repo), answers(plain)
        assert got == want, commit
        assert sum(len(hits) > 0 for hits in json.loads(got).values()) >= len(ASKED) * 7  # not vacuous
        assert repo.provenance()["model"] == plain.provenance()["model"]


def test_a_plain_corpus_is_one_version_whatever_a_task_names(tmp_path):
    """Its version is the store's (one), never read from the name: a corpus may be named `lib@2`."""
    symbols = plain_symbols("c1", tmp_path)
    plain = BuiltinSystem(SystemContext(tmp_path, MANIFEST, symbols, OFF, methods=("lexical",)))
    engine = plain.engine
    assert plain.select("lib@2") is symbols and plain.select("lib") is symbols and plain.engine is engine
    assert [h.symbol for h in plain.search("parse config", "lexical", 2)] == ["parse_config", "load_config"]


def test_a_repository_is_searched_through_its_index(store, tmp_path):  # noqa: F811
    with pytest.raises(CrmatrixError, match=rf"^{tmp_path}/store: a repository of many commits is searched "
                                            r"through its index \(rule build_repository_index\)$"):
        BuiltinSystem(SystemContext(tmp_path, MANIFEST, [], OFF, store_dir=store.directory, methods=("lexical",)))


def test_a_version_is_named_by_its_corpus_and_commit():
    assert versions.corpus_of("flask", "abc123") == "flask@abc123"
    assert versions.commit_of("flask@abc123") == "abc123"
    assert versions.commit_of(versions.corpus_of("lib@2", "c0ffee")) == "c0ffee"  # the last @
