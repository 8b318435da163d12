"""A file's content key is git's blob id, whether read from a directory or listed by git."""

import os
import subprocess

import pytest
from conftest import git

from crmatrix.corpora.blobs import blob_id, file_blob_id


@pytest.mark.parametrize("data", [b"", b"x", b"def f():\n    return 1\n", bytes(range(256)) * 5000])
def test_blob_id_is_gits_hash_object(tmp_path, data):
    f = tmp_path / "f"
    f.write_bytes(data)
    expected = subprocess.run(["git", "hash-object", str(f)], capture_output=True, text=True, check=True).stdout.strip()
    assert blob_id(data) == expected
    assert file_blob_id(f) == expected


def test_a_directorys_keys_are_those_git_ls_tree_lists_for_the_same_files(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "core.py").write_text("def core():\n    pass\n")
    (repo / "README.md").write_text("readme\n")
    (repo / "big.bin").write_bytes(os.urandom(3 << 20))  # read in several chunks
    os.symlink("pkg/core.py", repo / "link.py")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "c")
    listed = {}
    for line in git(repo, "ls-tree", "-r", "HEAD").splitlines():
        meta, path = line.split("\t")
        listed[path] = meta.split()[2]
    assert {p: file_blob_id(repo / p) for p in listed} == listed
    assert len(listed) == 4


def test_a_fifo_is_not_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        file_blob_id(tmp_path / "pipe")
