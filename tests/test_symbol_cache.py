"""Symbols cached per file content: a second commit parses only what changed, and what the cache
serves is exactly what a parse gives."""

import hashlib

import pytest
from conftest import git

from crmatrix import CrmatrixError
from crmatrix.corpora import pins
from crmatrix.corpora.blobs import blob_id
from crmatrix.corpora.languages import language_for
from crmatrix.symbols import cache as symcache
from crmatrix.symbols.extract import extract_source

A1 = "def a(x):\n    return x + 1\n\n\nclass A:\n    def m(self):\n        pass\n"
A2 = "def a(x):\n    return x + 2\n\n\nclass A:\n    def m(self):\n        pass\n"
B = "def b():\n    '''Bee.'''\n    return 2\n"
C = "import os\n\n\ndef c():\n    return os.sep\n"
D = "async def d():\n    pass\n"
X = "function x(a) { return a; }\nclass Y { z() {} }\n"


@pytest.fixture
def two_commits(tmp_path):
    """A repository whose second commit edits a.py, adds d.py, moves c.py unchanged and keeps the rest."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "lib").mkdir()
    git(repo, "init", "-q")
    for path, text in {"pkg/a.py": A1, "pkg/b.py": B, "pkg/c.py": C, "lib/x.js": X}.items():
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "a.py").write_text(A2)
    (repo / "pkg" / "d.py").write_text(D)
    (repo / "pkg" / "sub").mkdir()
    git(repo, "mv", "pkg/c.py", "pkg/sub/c2.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    return repo / ".git", first, git(repo, "rev-parse", "HEAD")


@pytest.fixture
def parses(monkeypatch):
    """Every parse the cache runs, as (blob id, language)."""
    calls = []

    def counting(source, path, language):
        calls.append((blob_id(source), language))
        return extract_source(source, path, language)

    monkeypatch.setattr(symcache, "extract_source", counting)
    return calls


def commit_items(repo, commit, reader, reads):
    """(path, blob, reader, language) of every source file of a commit; `reads` records each read."""
    def read(blob):
        reads.append(blob)
        return reader.read(blob)

    return [(f.path, f.blob, lambda b=f.blob: read(b), language_for(f.path))
            for f in pins.commit_files(repo, commit, ["**"], []).files if language_for(f.path)]


def test_a_second_commit_parses_only_its_changed_files_and_cached_symbols_equal_a_parse(two_commits, tmp_path,
                                                                                          parses):
    repo, first, second = two_commits
    cache = symcache.SymbolCache(tmp_path / "cache" / symcache.SUBDIR)
    reads = []
    with pins.BlobReader(repo) as reader:
        got1, stats1 = symcache.extract_blobs(commit_items(repo, first, reader, reads), cache)
        assert stats1 == {"files": 4, "unique": 4, "cached": 0, "parsed": 4}
        del parses[:], reads[:]
        items = commit_items(repo, second, reader, reads)
        got2, stats2 = symcache.extract_blobs(items, cache)
    assert stats2 == {"files": 5, "unique": 5, "cached": 3, "parsed": 2}
    assert sorted(parses) == sorted([(blob_id(A2.encode()), "python"), (blob_id(D.encode()), "python")])
    assert sorted(reads) == sorted([blob_id(A2.encode()), blob_id(D.encode())])  # a cached file is never read
    texts = {"pkg/a.py": A2, "pkg/b.py": B, "pkg/sub/c2.py": C, "pkg/d.py": D, "lib/x.js": X}
    assert set(got2) == set(texts)
    for path, text in texts.items():
        assert got2[path] == extract_source(text.encode(), path, language_for(path)), path
    assert [s.qualname for s in got2["pkg/sub/c2.py"]] == ["c"] and got2["pkg/sub/c2.py"][0].path == "pkg/sub/c2.py"
    assert got1["pkg/c.py"][0].path == "pkg/c.py"
    assert [s.qualname for s in got2["lib/x.js"]] == ["x", "Y", "Y.z"]


def test_the_cache_is_read_by_another_process_and_the_same_bytes_parse_once(tmp_path, parses):
    root = tmp_path / "cache"
    items = [(path, blob_id(B.encode()), B.encode(), "python") for path in ("one.py", "two.py")]
    got, stats = symcache.extract_blobs(items, symcache.SymbolCache(root))
    assert stats == {"files": 2, "unique": 1, "cached": 0, "parsed": 1}
    assert [s.path for s in got["two.py"]] == ["two.py"]
    again, stats = symcache.extract_blobs(items[:1], symcache.SymbolCache(root))
    assert stats == {"files": 1, "unique": 1, "cached": 1, "parsed": 0}
    assert again["one.py"] == got["one.py"] == extract_source(B.encode(), "one.py", "python")
    (shard,) = root.rglob("*.sym")
    assert shard.read_bytes() == symcache.shard_bytes({(blob_id(B.encode()), "python"): got["one.py"]})
    assert shard.name == f"{hashlib.sha256(shard.read_bytes()).hexdigest()}.sym"
    assert shard.parent == root / symcache.extractor_key()


def test_each_batch_of_parsed_files_is_one_shard(tmp_path, parses):
    root = tmp_path / "cache"
    texts = [A1, A2, B, C, D]
    items = [(f"f{i}.py", blob_id(t.encode()), t.encode(), "python") for i, t in enumerate(texts)]
    symcache.extract_blobs(items, symcache.SymbolCache(root), batch=2)
    assert len(list(root.rglob("*.sym"))) == 3
    got, stats = symcache.extract_blobs(items, symcache.SymbolCache(root))
    assert stats["cached"] == 5 and got["f4.py"] == extract_source(D.encode(), "f4.py", "python")


def test_a_damaged_entry_or_shard_is_skipped_and_parsed_again(tmp_path, parses, capsys):
    root = tmp_path / "cache"
    items = [(name, blob_id(t.encode()), t.encode(), "python") for name, t in (("b.py", B), ("c.py", C))]
    fresh, _ = symcache.extract_blobs(items, symcache.SymbolCache(root))
    (shard,) = root.rglob("*.sym")
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0xFF  # inside the last entry's body: c.py's or b.py's, whichever sorts last
    shard.write_bytes(bytes(data))
    last = max((blob_id(B.encode()), blob_id(C.encode())))
    got, stats = symcache.extract_blobs(items, symcache.SymbolCache(root))
    assert (stats["cached"], stats["parsed"]) == (1, 1) and got == fresh
    assert capsys.readouterr().err == (f"crmatrix: symbol cache: skipped {shard}: the entry of {last} (python) does "
                                       "not match its hash (torn or altered); its files are parsed again\n")
    shard.write_bytes(b"CRMXSYM1\n[[" + bytes(data[20:]))
    got, stats = symcache.extract_blobs(items, symcache.SymbolCache(root))
    assert stats["cached"] == 1 and got == fresh  # the shard written by the run before serves
    assert "its header is unreadable" in capsys.readouterr().err


def test_another_grammar_version_is_another_extractor(tmp_path, parses, monkeypatch):
    root = tmp_path / "cache"
    item = ("b.py", blob_id(B.encode()), B.encode(), "python")
    symcache.extract_blobs([item], symcache.SymbolCache(root))
    monkeypatch.setattr(symcache, "versions", lambda: {"tree_sitter_python": "0.0.1"})
    symcache.extractor_key.cache_clear()
    try:
        assert symcache.extract_blobs([item], symcache.SymbolCache(root))[1]["parsed"] == 1
    finally:
        symcache.extractor_key.cache_clear()
    assert len({p.parent for p in root.rglob("*.sym")}) == 2


def test_wrong_keys_are_errors_not_entries(tmp_path):
    cache = symcache.SymbolCache(tmp_path)
    with pytest.raises(CrmatrixError, match=rf"^b\.py: its bytes have blob id {blob_id(B.encode())}, not the "):
        symcache.extract_blobs([("b.py", blob_id(C.encode()), B.encode(), "python")], cache)
    with pytest.raises(CrmatrixError, match="^b.py: 'HEAD' is not a blob id"):
        symcache.extract_blobs([("b.py", "HEAD", B.encode(), "python")], cache)
    with pytest.raises(CrmatrixError, match="^symbol cache: a path is given twice: b.py$"):
        symcache.extract_blobs([("b.py", blob_id(B.encode()), B.encode(), "python")] * 2, cache)
    assert not list(tmp_path.rglob("*.sym"))
