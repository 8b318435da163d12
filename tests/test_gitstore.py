"""Many commits of one repository from a multi-commit bundle: found, fetched, listed by blob, read, written out."""

import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import SHARED, git, needs_shared

from crmatrix import CrmatrixError
from crmatrix.corpora import pins
from crmatrix.corpora.blobs import blob_id
from crmatrix.corpora.tree import MAX_FILE_BYTES, select_files

URL = "https://example.invalid/acme/widget.git"
CORE_1 = "def parse(text):\n    return text.split()\n"
CORE_2 = "def parse(text):\n    return text.split(',')\n"
UTIL = "def helper():\n    pass\n"


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", f"c-{sha}")
    return sha


def make_swebench_bundle(tmp: Path) -> tuple[Path, list[str]]:
    """A bundle as ../shared's `@swebench` ones are made: three commits of a repository, none
    the parent of another, each fetched at depth 1 under its tag `c-<sha>`, bundled together."""
    src = tmp / "src"
    (src / "pkg").mkdir(parents=True)
    git(src, "init", "-q", "-b", "main")
    git(src, "commit", "-q", "--allow-empty", "-m", "root")
    (src / "pkg" / "core.py").write_text(CORE_1)
    (src / "pkg" / "util.py").write_text(UTIL)
    (src / "README.md").write_text("widget\n")
    first = commit_all(src, "first")
    git(src, "commit", "-q", "--allow-empty", "-m", "between")
    (src / "pkg" / "core.py").write_text(CORE_2)
    (src / "node_modules" / "dep").mkdir(parents=True)
    (src / "node_modules" / "dep" / "index.py").write_text("x = 1\n")
    (src / "pkg" / "big.py").write_text("# " + "x" * MAX_FILE_BYTES + "\n")
    (src / "pkg" / "blob.py").write_bytes(b"\0\1\2")
    (src / "pkg" / "latin.py").write_bytes("s = 'caf\xe9'\n".encode("latin-1"))
    os.symlink("core.py", src / "pkg" / "alias.py")
    second = commit_all(src, "second")
    git(src, "commit", "-q", "--allow-empty", "-m", "between")
    (src / "pkg" / "new.py").write_text("def new():\n    pass\n")
    third = commit_all(src, "third")
    shallow = tmp / "shallow"
    git(tmp, "init", "-q", str(shallow))
    for sha in (first, second, third):
        git(shallow, "fetch", "-q", "--depth", "1", f"file://{src}", f"refs/tags/c-{sha}:refs/tags/c-{sha}")
    mirror = tmp / "mirror"
    mirror.mkdir()
    bundle = mirror / "acme+widget@swebench.bundle"
    git(shallow, "bundle", "create", "-q", str(bundle), "--tags")
    return bundle, [first, second, third]


@pytest.fixture(scope="module")
def swebench_bundle(tmp_path_factory):
    return make_swebench_bundle(tmp_path_factory.mktemp("bundle"))


@pytest.fixture(scope="module")
def store(swebench_bundle, tmp_path_factory):
    bundle, commits = swebench_bundle
    dest = tmp_path_factory.mktemp("stores") / "acme+widget.git"
    assert pins.fetch_commits([bundle], dest) == sorted(commits)
    return dest, commits


def test_the_bundle_is_one_git_clone_cannot_read(swebench_bundle, tmp_path):
    bundle, _ = swebench_bundle
    proc = subprocess.run(["git", "clone", "-q", str(bundle), str(tmp_path / "c")], capture_output=True, text=True)
    assert proc.returncode != 0 and "Failed to traverse parents of commit" in proc.stderr


def test_bundle_commits_lists_every_commit_of_the_repositorys_bundles_without_fetching(
        swebench_bundle, two_commit_repo, tmp_path, caplog):
    bundle, commits = swebench_bundle
    repo, _, head = two_commit_repo
    other = tmp_path / "other"
    other.mkdir()
    git(repo, "bundle", "create", "-q", str(other / f"acme+widget@{head[:8]}.bundle"), "HEAD")
    (other / "acme+widget@broken.bundle").write_bytes(b"not a bundle\n")
    (other / "acme+gadget@swebench.bundle").write_bytes(b"another repository's\n")
    found = pins.bundle_commits(URL, [str(bundle.parent), str(other), str(tmp_path / "absent")])
    assert found == {**dict.fromkeys(commits, bundle), head: other / f"acme+widget@{head[:8]}.bundle"}
    assert [r.getMessage() for r in caplog.records] == [
        f"passed over {other / 'acme+widget@broken.bundle'}: not a readable git bundle "
        "(it does not begin with a v2 or v3 bundle signature)"]
    assert pins.bundle_commits("https://example.invalid/acme/nothing", [str(bundle.parent)]) == {}


def list_heads(bundle: Path) -> list[tuple[str, str]]:
    out = subprocess.run(["git", "bundle", "list-heads", str(bundle)], capture_output=True, text=True, check=True)
    return [tuple(line.split(" ", 1)) for line in out.stdout.splitlines()]


def test_a_bundles_heads_are_read_from_its_header_as_git_lists_them(swebench_bundle, two_commit_repo, tmp_path):
    bundle, commits = swebench_bundle
    repo, first, head = two_commit_repo
    v3 = tmp_path / "v3.bundle"  # v3: capability lines; a prerequisite line, the history cut at `first`
    git(repo, "bundle", "create", "-q", "--version=3", str(v3), f"{first}..HEAD", "--all")
    shared = sorted((SHARED / "corpora").glob("*.bundle"))  # every real one, where ../shared is here
    for b in [bundle, v3, *shared]:
        assert pins.bundle_refs(b) == list_heads(b) != [], b
    assert {c for c, _ in pins.bundle_refs(bundle)} == set(commits)
    assert v3.read_bytes().startswith(b"# v3 git bundle\n@") and b"\n-" + first.encode() in v3.read_bytes()
    cut = tmp_path / "cut.bundle"  # the header cut before the empty line that ends it
    cut.write_bytes(bundle.read_bytes().split(b"\n\n", 1)[0] + b"\n")
    with pytest.raises(CrmatrixError, match=r"cut.bundle: not a readable git bundle \(its header has no end\)"):
        pins.bundle_refs(cut)
    with pytest.raises(CrmatrixError, match=r"absent.bundle: not a readable git bundle \(No such file"):
        pins.bundle_refs(tmp_path / "absent.bundle")


def test_commit_files_lists_what_a_corpus_holds_with_blob_ids_and_sizes(store):
    repo, (first, second, _) = store
    listing = pins.commit_files(repo, first, ["**"], [])
    assert listing == pins.Listing(
        [pins.TreeFile("README.md", blob_id(b"widget\n"), 7),
         pins.TreeFile("pkg/core.py", blob_id(CORE_1.encode()), len(CORE_1)),
         pins.TreeFile("pkg/util.py", blob_id(UTIL.encode()), len(UTIL))], [], 0)
    listing = pins.commit_files(repo, second, ["pkg/**/*.py"], ["**/util.py"])
    assert [f.path for f in listing.files] == ["pkg/blob.py", "pkg/core.py", "pkg/latin.py"]
    assert listing.files[1].blob == blob_id(CORE_2.encode())
    assert listing.skipped == [{"path": "pkg/alias.py", "reason": "symlink"},
                               {"path": "pkg/big.py", "reason": "too-large"}]
    assert listing.excluded_by_glob == 2  # README.md, pkg/util.py; node_modules/ is no corpus's


def test_an_unknown_commit_is_one_line_naming_the_store(store):
    repo, _ = store
    with pytest.raises(CrmatrixError, match=rf"^{re.escape(str(repo))}: commit {'1' * 40}: fatal: not a tree object"):
        pins.commit_files(repo, "1" * 40, ["**"], [])


def test_blobs_are_read_in_bulk_and_a_missing_one_is_named(store):
    repo, (first, *_) = store
    blobs = [f.blob for f in pins.commit_files(repo, first, ["**"], []).files]
    assert pins.read_blobs(repo, blobs + blobs[:1]) == {blob_id(b"widget\n"): b"widget\n",
                                                        blob_id(CORE_1.encode()): CORE_1.encode(),
                                                        blob_id(UTIL.encode()): UTIL.encode()}
    with pins.BlobReader(repo) as reader:
        with pytest.raises(CrmatrixError, match=f"^{re.escape(str(repo))}: {'2' * 40}: no such object$"):
            reader.read("2" * 40)
        assert reader.read(blobs[0]) == b"widget\n"  # the process serves on after a miss
        with pytest.raises(CrmatrixError, match="is not a blob id"):
            reader.read("HEAD:README.md")


def test_a_written_commit_is_what_select_files_keeps_of_its_checkout(store, tmp_path):
    repo, (_, second, third) = store
    for commit in (second, third):
        out = tmp_path / commit / "out"
        out.mkdir(parents=True)
        part = pins.write_commit(repo, commit, out, ["pkg/**"], [])
        checkout = tmp_path / commit / "checkout"
        checkout.mkdir()
        subprocess.run(["git", f"--git-dir={repo}", f"--work-tree={checkout}", "checkout", "-q", "-f", commit, "--",
                        "."], check=True)
        (checkout / "pkg" / "alias.py").unlink()  # the one documented difference: a symlink is not followed
        expected = select_files(checkout, tmp_path / commit / "selected", ["pkg/**"], [])
        expected["skipped"] = sorted([*expected["skipped"], {"path": "pkg/alias.py", "reason": "symlink"}],
                                     key=lambda s: s["path"])
        expected["skipped_counts"] = {**expected["skipped_counts"], "symlink": 1}
        assert part == expected
        assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.py")) == sorted(
            ["pkg/core.py", "pkg/util.py", *(["pkg/new.py"] if commit == third else [])])
        assert part["skipped_counts"] == {"binary": 1, "non-utf8": 1, "symlink": 1, "too-large": 1}


def test_a_failed_fetch_leaves_nothing_and_keeps_an_earlier_store(swebench_bundle, tmp_path):
    bundle, commits = swebench_bundle
    dest = tmp_path / "stores" / "acme+widget.git"
    assert pins.fetch_commits([bundle], dest) == sorted(commits)
    cut = tmp_path / "acme+widget@cut.bundle"
    cut.write_bytes(bundle.read_bytes()[:-40])
    with pytest.raises(CrmatrixError, match=rf"^{re.escape(str(cut))}: cannot be fetched: "):
        pins.fetch_commits([cut], dest)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["acme+widget.git"]
    assert pins.commit_files(dest, commits[0], ["**"], []).files[0].path == "README.md"


@needs_shared
def test_the_shared_flask_bundle_holds_its_swebench_commits(tmp_path):
    import json

    url = "https://github.com/pallets/flask"
    found = pins.bundle_commits(url, [str(SHARED / "corpora")])
    rows = [json.loads(line) for split in ("lite", "verified")
            for line in (SHARED / "data" / "swe-bench" / f"{split}.jsonl").read_text().splitlines()]
    wanted = {r["base_commit"] for r in rows if r["repo"] == "pallets/flask"}
    bundle = SHARED / "corpora" / "pallets+flask@swebench.bundle"
    assert {c: b for c, b in found.items() if b == bundle} == dict.fromkeys(wanted, bundle)
    assert len(wanted) == 4
    repo = tmp_path / "pallets+flask.git"
    assert pins.fetch_commits([bundle], repo) == sorted(wanted)
    for commit in sorted(wanted):
        listing = pins.commit_files(repo, commit, ["src/**/*.py"], [])
        app = next(f for f in listing.files if f.path == "src/flask/app.py")
        data = pins.read_blobs(repo, [app.blob])[app.blob]
        assert blob_id(data) == app.blob and len(data) == app.size and b"class Flask(" in data
