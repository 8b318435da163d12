import hashlib
import json
import os
import socket
import stat
import subprocess
import sys

import pytest

from crmatrix import CrmatrixError
from crmatrix.corpora import languages
from crmatrix.corpora import tree as corpus
from crmatrix.stages import extract_symbols, fetch_corpus, write_corpus


@pytest.mark.parametrize(
    "path,pattern,expected",
    [
        ("src/a.py", "src/**", True),
        ("src/x/y/a.py", "src/**/*.py", True),
        ("src/a.py", "src/**/*.py", True),
        ("src/a.ts", "src/**/*.py", False),
        ("srcx/a.py", "src/**", False),
        ("a.py", "*.py", True),
        ("d/a.py", "*.py", False),
        ("packages/jest/src/__tests__/a.ts", "**/__tests__/**", True),
        ("index.js", "index.js", True),
        ("lib/a?.js", "lib/a[?].js", False),
        ("lib/a[1].js", "lib/a[1].js", True),      # brackets are literal, not a class
        ("lib/a\\b.js", "lib/a\\b.js", True),      # so is a backslash
        ("lib/ab.js", "lib/a?.js", True),
        ("lib/a/.js", "lib/a?.js", False),
        (".github/ci.yml", "**", True),           # dot files are ordinary files
        ("src/.env", "src/*", True),
        ("src/A.py", "src/a.py", False),          # case-sensitive everywhere
    ],
)
def test_glob_match(path, pattern, expected):
    assert corpus.path_filter([pattern], [])(path) is expected


def test_path_filter_includes_then_excludes():
    keep = corpus.path_filter(["src/**/*.py", "README.md"], ["**/tests/**", "src/*/_*.py"])
    assert [p for p in ["src/a.py", "src/x/tests/t.py", "src/x/_v.py", "src/x/y/_v.py", "README.md", "setup.py"]
            if keep(p)] == ["src/a.py", "src/x/y/_v.py", "README.md"]


@pytest.fixture
def messy_tree(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text("def a():\n    pass\n")
    (src / "pkg" / "b.rs").write_text("fn b() {}\n")
    (src / "pkg" / "notes.txt").write_text("hello\n")
    (src / "pkg" / "blob.bin").write_bytes(b"\x00\x01\x02")
    (src / "pkg" / "latin1.py").write_bytes(b"# caf\xe9\n")
    (src / "pkg" / "huge.py").write_text("x = 1\n" * 200_000)
    (src / "pkg" / "tests").mkdir()
    (src / "pkg" / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (src / "node_modules").mkdir()
    (src / "node_modules" / "dep.js").write_text("function dep() {}\n")
    outside = tmp_path / "secret.py"
    outside.write_text("def secret():\n    pass\n")
    os.symlink(outside, src / "pkg" / "link_out.py")
    os.symlink(src / "pkg" / "a.py", src / "pkg" / "link_in.py")
    return src


def test_select_files_skips_and_counts(messy_tree, tmp_path):
    dest = tmp_path / "tree"
    dest.mkdir()
    part = corpus.select_files(messy_tree, dest, ["**"], ["**/tests/**"])
    paths = [f["path"] for f in part["files"]]
    assert paths == ["pkg/a.py", "pkg/b.rs", "pkg/link_in.py", "pkg/notes.txt"]
    assert part["skipped"] == [
        {"path": "pkg/blob.bin", "reason": "binary"},
        {"path": "pkg/huge.py", "reason": "too-large"},
        {"path": "pkg/latin1.py", "reason": "non-utf8"},
        {"path": "pkg/link_out.py", "reason": "symlink-out-of-tree"},
    ]
    assert part["skipped_counts"] == {"binary": 1, "non-utf8": 1, "symlink-out-of-tree": 1, "too-large": 1}
    assert part["languages"] == {"other": 1, "python": 2, "rust": 1}
    assert part["excluded_by_glob"] == 1
    assert (dest / "pkg" / "a.py").read_text() == "def a():\n    pass\n"
    assert not (dest / "pkg" / "link_out.py").exists() and not (dest / "node_modules").exists()
    a = next(f for f in part["files"] if f["path"] == "pkg/a.py")
    assert a == {"path": "pkg/a.py", "size": 18, "language": "python",
                 "sha256": hashlib.sha256(b"def a():\n    pass\n").hexdigest()}


def test_content_hash_follows_content_only(messy_tree, tmp_path):
    def build(name):
        d = tmp_path / name
        d.mkdir()
        return corpus.select_files(messy_tree, d, ["**"], [])["content_hash"]

    h1 = build("t1")
    assert build("t2") == h1
    (messy_tree / "pkg" / "a.py").write_text("def a():\n    return 1\n")
    assert build("t3") != h1


def test_build_corpus_writes_tree_and_manifest(messy_tree, tmp_path):
    tree, man = tmp_path / "results" / "c" / "tree", tmp_path / "results" / "c" / "manifest.json"
    m = fetch_corpus.run("c", {"path": str(messy_tree), "include": ["pkg/*.py"]}, tree, man, [], {})
    assert json.loads(man.read_text()) == m
    assert m["pin"] == {"kind": "path", "path": str(messy_tree)}
    assert [f["path"] for f in m["files"]] == ["pkg/a.py", "pkg/link_in.py"]
    assert sorted(p.name for p in tree.rglob("*") if p.is_file()) == ["a.py", "link_in.py"]
    assert m["documents"] is False


def test_a_corpus_written_out_of_a_benchmark_file_by_its_format(tmp_path):
    """DS-1000's docs datastore: one document per distinct gold doc, extracted as one symbol each."""
    rows = [{"prompt": "p0", "docs": [{"title": "numpy.sum", "text": "Sum of array elements."},
                                      {"title": "numpy.mean", "text": "Arithmetic mean."}]},
            {"prompt": "p1", "docs": [{"title": "numpy.sum", "text": "(another text: the first one stays)"}]},
            {"prompt": "p2"}]
    file = tmp_path / "ds1000.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "results"
    m = write_corpus.run("docs", {"ds1000": {}, "exclude": ["numpy.mean.txt"]}, file, out / "tree", out / "man.json")
    assert (m["pin"], m["origin"], m["documents"]) == (
        {"kind": "ds1000", "ds1000": {"file": str(file)}}, {"source": str(file), "documents": 2}, True)
    assert [f["path"] for f in m["files"]] == ["numpy.sum.txt"]
    symbols = extract_symbols.run(out / "tree", out / "man.json", out / "symbols.jsonl")
    assert [(s.name, s.kind, s.body) for s in symbols] == [("numpy.sum", "doc", "Sum of array elements.")]
    with pytest.raises(CrmatrixError) as e:
        write_corpus.run("c", {"path": str(tmp_path)}, file, out / "t2", out / "m2.json")
    assert str(e.value) == "corpora.c: needs one of ds1000, repoqa (a corpus written out of a benchmark file)"
    with pytest.raises(CrmatrixError) as e:  # and the fetch stage fetches, never writes
        fetch_corpus.run("docs", {"ds1000": {"file": str(file)}}, out / "t3", out / "m3.json", [], {})
    assert str(e.value) == "corpora.docs: needs exactly one of git, npm, path, pypi (found none)"
    assert sorted(p.name for p in out.iterdir()) == ["man.json", "symbols.jsonl", "tree"]


def test_selecting_nothing_is_an_error_and_leaves_nothing(messy_tree, tmp_path):
    results = tmp_path / "results"
    with pytest.raises(CrmatrixError, match=r"corpora\.c: include/exclude select no readable file"):
        fetch_corpus.run("c", {"path": str(messy_tree), "include": ["*.go"]}, results / "c" / "tree",
                            results / "c" / "manifest.json", [], {})
    # no staging or scratch directory, nor the directory made for them
    assert not (results / "c").exists()


def test_dominant_language():
    assert languages.dominant_language({"languages": {"python": 2, "other": 9}}) is None
    assert languages.dominant_language({"languages": {"python": 3, "rust": 5, "other": 9}}) == "rust"
    assert languages.dominant_language({"languages": {"rust": 4, "go": 4}}) == "go"
    assert languages.dominant_language({"languages": {"python": 1, "other": 9}}, min_files=1) == "python"
    assert languages.dominant_language({"languages": {"other": 9}}, min_files=1) is None


# Run in a child with a timeout: reading a FIFO blocks forever, so a regression must fail, not hang.
FETCH = """
import sys
from pathlib import Path
from crmatrix.stages import fetch_corpus
fetch_corpus.run("c", {"path": sys.argv[1]}, Path(sys.argv[2]), Path(sys.argv[3]), [], {})
"""


def test_special_files_and_symlinked_directories_are_skipped_and_counted(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "pkg" / "real").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text("def a():\n    pass\n")
    (src / "pkg" / "real" / "b.py").write_text("def b():\n    pass\n")
    os.mkfifo(src / "pkg" / "pipe")
    monkeypatch.chdir(src / "pkg")  # a relative name keeps the socket path under the AF_UNIX length limit
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("sock")
    os.symlink(src / "pkg" / "pipe", src / "pkg" / "to_pipe.py")
    os.symlink(src / "pkg" / "real", src / "pkg" / "linked")
    os.symlink(tmp_path, src / "loop")
    tree, man = tmp_path / "out" / "tree", tmp_path / "out" / "manifest.json"
    try:
        proc = subprocess.run([sys.executable, "-c", FETCH, str(src), str(tree), str(man)],
                              capture_output=True, text=True, timeout=120)
    finally:
        sock.close()
    assert proc.returncode == 0, proc.stderr
    m = json.loads(man.read_text())
    assert [f["path"] for f in m["files"]] == ["pkg/a.py", "pkg/real/b.py"]
    assert m["skipped"] == [
        {"path": "loop", "reason": "symlink-to-directory"},
        {"path": "pkg/linked", "reason": "symlink-to-directory"},
        {"path": "pkg/pipe", "reason": "not-a-regular-file"},
        {"path": "pkg/sock", "reason": "not-a-regular-file"},
        {"path": "pkg/to_pipe.py", "reason": "symlink-not-a-file"},
    ]
    assert m["skipped_counts"] == {"not-a-regular-file": 2, "symlink-not-a-file": 1, "symlink-to-directory": 2}
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*")) == ["pkg", "pkg/a.py", "pkg/real",
                                                                               "pkg/real/b.py"]


def test_a_device_file_is_skipped_not_read(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("def a():\n    pass\n")
    try:  # a character device that reads as empty (/dev/null's numbers): read, it would pass for an empty file
        os.mknod(src / "null.py", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")
    m = fetch_corpus.run("c", {"path": str(src)}, tmp_path / "out" / "tree", tmp_path / "out" / "m.json", [], {})
    assert [f["path"] for f in m["files"]] == ["a.py"]
    assert m["skipped"] == [{"path": "null.py", "reason": "not-a-regular-file"}]


def test_a_full_disk_names_the_output_what_it_needed_and_the_room_left(tmp_path, monkeypatch):
    """ENOSPC (the same path as `ulimit -f`'s EFBIG, which tests/test_workflow.py runs for real):
    the output, its size and the filesystem's free bytes, and nothing left of the write."""
    import errno
    import re

    from crmatrix import atomic

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", full)
    out = tmp_path / "results" / "symbols.jsonl"
    with pytest.raises(CrmatrixError) as e:
        atomic.write_bytes(out, b"x" * 5000)
    assert re.fullmatch(rf"{re.escape(str(out))}: cannot write its 5,000 bytes: No space left on device \([\d,]+ "
                        r"bytes free on its filesystem\); make room and run again", str(e.value))
    assert list(out.parent.iterdir()) == []
    with pytest.raises(CrmatrixError) as e, atomic.staged_dir(tmp_path / "results" / "tree") as stage:
        (stage / "a.py").write_text("a = 1\n")
        full(0)
    assert re.fullmatch(rf"{re.escape(str(tmp_path / 'results' / 'tree'))}: ran out of room writing a.py, after 6 "
                        r"bytes of it, and needs more: No space left on device \([\d,]+ bytes free on its "
                        r"filesystem\); make room and run again", str(e.value))
    assert list(out.parent.iterdir()) == []
