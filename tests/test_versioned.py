"""The versioned store of a repository's commits: each commit's symbols exactly what a plain
extraction of that commit gives, with each distinct content stored once."""

import hashlib
import json

import pytest

from crmatrix import CrmatrixError
from crmatrix.symbols.extract import extract_files
from crmatrix.symbols.versioned import SymbolStore, build, content_of

# --- a repository of three commits ------------------------------------------------------------

KEEP = '''"""Helpers that never change."""


def slugify(title):
    """Turn a title into a url slug."""
    return title.lower().replace(" ", "-")


class Cache:
    """A least recently used cache."""

    def get(self, key):
        return self.data.get(key)

    def evict_oldest(self):
        # drop the least recently used entry
        self.data.popitem(last=False)
'''
EDIT_1 = '''def parse_config(text):
    """Read settings from key value text."""
    return dict(line.split("=", 1) for line in text.splitlines())


def load_config(path):
    return parse_config(open(path).read())
'''
EDIT_2 = '''def parse_config(text):
    """Read settings from key value text, blank lines skipped."""
    lines = [line for line in text.splitlines() if line.strip()]
    return dict(line.split("=", 1) for line in lines)


def load_config(path):
    return parse_config(open(path).read())
'''
GONE = '''def fetch_page(url):
    """Download a web page."""
    return Session().get(url).text
'''
MOVED = '''def open_connection(host, timeout):
    """Open a network connection with a time limit."""
    return socket.create_connection((host, 80), timeout=timeout)
'''
SHIFT_1 = '''def first():
    return 1


def second():
    """The second helper."""
    return 2
'''
SHIFT_2 = '''def second():
    """The second helper."""
    return 2


def first():
    return 1
'''
# the same definition twice in one file: one content, two occurrences
ADDED = '''import sys

if sys.version_info >= (3,):
    def compat(frame):
        return frame.read()
else:
    def compat(frame):
        return frame.read()


def read_frame(stream):
    """Read one frame of the stream."""
    return compat(stream)
'''
FRAMES = '''class FrameReader:
    """Reads frames."""

    def read_frame(self):
        # read frame bytes until the end marker
        return self.stream.read_until(b"END")
'''

COMMITS = {
    "c1": {"pkg/keep.py": KEEP, "pkg/edit.py": EDIT_1, "pkg/gone.py": GONE, "pkg/old_place.py": MOVED,
           "pkg/shift.py": SHIFT_1},
    # edited, deleted, moved to another path, a function moved within its file, a file added
    "c2": {"pkg/keep.py": KEEP, "pkg/edit.py": EDIT_2, "pkg/net/new_place.py": MOVED, "pkg/shift.py": SHIFT_2,
           "pkg/added.py": ADDED},
    # the edit reverted, a copy of a file at another path, a class added
    "c3": {"pkg/keep.py": KEEP, "pkg/edit.py": EDIT_1, "pkg/net/new_place.py": MOVED, "pkg/shift.py": SHIFT_2,
           "pkg/added.py": ADDED, "pkg/copy_of_keep.py": KEEP, "pkg/frames.py": FRAMES},
}
BLOBS = {hashlib.sha1(text.encode()).hexdigest(): text for tree in COMMITS.values() for text in tree.values()}


def blob(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def listing(commits) -> dict:
    return {c: [(p, blob(t)) for p, t in COMMITS[c].items()] for c in commits}


def plain_symbols(commit, tmp_path):
    """A plain extraction of the commit's tree, written out."""
    root = tmp_path / "trees" / commit
    for path, text in COMMITS[commit].items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return extract_files(root, sorted(COMMITS[commit]))


def file_symbols(path, blob_id):
    from crmatrix.corpora.languages import language_for
    from crmatrix.symbols.extract import extract_source

    file_symbols.asked.append((path, blob_id))
    return extract_source(BLOBS[blob_id].encode(), path, language_for(path))


file_symbols.asked = []


@pytest.fixture
def store(tmp_path):
    build(listing(COMMITS), file_symbols, tmp_path / "store")
    return SymbolStore(tmp_path / "store")


# --- the store ----------------------------------------------------------------------------------

def test_each_commit_reads_back_as_its_plain_extraction(store, tmp_path):
    occurrences = 0
    for commit in COMMITS:
        plain = plain_symbols(commit, tmp_path)
        assert store.symbols_of(commit) == plain
        occurrences += len(plain)
    # each distinct content once: the moved file and the copy are new contents (their path is
    # part of a content), the shifted functions and the reverted edit are not
    distinct = {content_of(s) for c in COMMITS for s in plain_symbols(c, tmp_path)}
    assert len(store) == len(distinct) == 20
    assert occurrences == 10 + 12 + 18 and store.meta["occurrences"] == occurrences
    assert [json.loads(line)["name"] for line in (store.directory / "contents.jsonl").read_text().splitlines()
            ].count("compat") == 1  # the duplicated definition is one content


def test_each_distinct_file_is_asked_once_and_the_bytes_do_not_depend_on_order(tmp_path):
    file_symbols.asked.clear()
    build(listing(COMMITS), file_symbols, tmp_path / "a")
    assert sorted(file_symbols.asked) == sorted({pb for files in listing(COMMITS).values() for pb in files})
    assert len(file_symbols.asked) == 11
    given = {pb: file_symbols(*pb) for pb in list(file_symbols.asked)}
    build(dict(reversed(listing(COMMITS).items())), given, tmp_path / "b")  # a dict, commits in another order
    for name in ("contents.jsonl", "contents.offsets.npy", "occurrences.npy", "meta.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_bad_input_is_one_line_naming_it(tmp_path):
    with pytest.raises(CrmatrixError, match="commit c1: lists pkg/a.py twice"):
        build({"c1": [("pkg/a.py", "x"), ("pkg/a.py", "y")]}, {}, tmp_path / "s")
    with pytest.raises(CrmatrixError, match="no symbols given for pkg/a.py at blob x"):
        build({"c1": [("pkg/a.py", "x")]}, {}, tmp_path / "s")
    with pytest.raises(CrmatrixError, match="include 'slugify' of pkg/other.py"):
        build({"c1": [("pkg/a.py", blob(KEEP))]}, lambda p, b: file_symbols("pkg/other.py", b), tmp_path / "s")
    assert not (tmp_path / "s").exists()
    build({"c1": [("pkg/keep.py", blob(KEEP))]}, file_symbols, tmp_path / "s")
    with pytest.raises(CrmatrixError, match="holds no commit c9"):
        SymbolStore(tmp_path / "s").symbols_of("c9")
