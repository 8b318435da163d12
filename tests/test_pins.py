import base64
import hashlib
import io
import json
import os
import tarfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import SHARED, git, needs_shared

from crmatrix import CrmatrixError
from crmatrix.corpora import languages, pins
from crmatrix.corpora.tree import MAX_FILE_BYTES
from crmatrix.stages import fetch_corpus


def tarball(top: str, files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@dataclass(frozen=True)
class Cut:
    """A 200 that promises `length` bytes and sends `body` only, then closes (a reset transfer)."""

    body: bytes
    length: int


@dataclass(frozen=True)
class Unsized:
    """A 200 whose length the client learns only when the server closes the connection."""

    body: bytes


class Routes(dict):
    """Path -> response: bytes (200), an int status, Cut, Unsized, or a list of those served in
    turn (the last one repeats). `requests` records every path asked for."""

    def __init__(self):
        super().__init__()
        self.requests: list[str] = []

    def respond(self, path):
        self.requests.append(path)
        r = self.get(path, 404)
        return (r.pop(0) if len(r) > 1 else r[0]) if isinstance(r, list) else r


@pytest.fixture
def registry(monkeypatch):
    """A loopback HTTP server standing in for PyPI's JSON simple index and the npm registry."""
    routes = Routes()
    monkeypatch.setattr(pins.downloads, "RETRY_DELAYS_S", (0.0, 0.0, 0.0))  # the retries, without the waiting

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            r = routes.respond(self.path)
            body = r.body if isinstance(r, (Cut, Unsized)) else b"error" if isinstance(r, int) else r
            self.send_response(r if isinstance(r, int) else 200)
            if not isinstance(r, Unsized):
                self.send_header("Content-Length", str(r.length if isinstance(r, Cut) else len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", routes
    server.shutdown()


SDIST = tarball("demo_pkg-1.2.0", {"src/demo_pkg/core.py": "def go():\n    pass\n", "README.md": "demo\n"})
NPM_TGZ = tarball("package", {"lib/index.js": "function go() {}\n", "package.json": "{}"})


def serve_pypi(base, routes, data=SDIST):
    routes["/simple/demo-pkg/"] = json.dumps({"files": [
        {"filename": "demo_pkg-1.1.0.tar.gz", "url": "/files/old.tar.gz", "hashes": {}},
        {"filename": "demo_pkg-1.2.0-py3-none-any.whl", "url": "/files/w.whl", "hashes": {}},
        {"filename": "demo_pkg-1.2.0.tar.gz", "url": "/files/demo_pkg-1.2.0.tar.gz", "hashes": {}},
    ]}).encode()
    routes["/files/demo_pkg-1.2.0.tar.gz"] = data
    return f"{base}/simple"


def test_pypi_sdist_is_fetched_verified_and_unpacked(registry, tmp_path):
    base, routes = registry
    index = serve_pypi(base, routes)
    sha = hashlib.sha256(SDIST).hexdigest()
    tree, man = tmp_path / "r" / "tree", tmp_path / "r" / "manifest.json"
    m = fetch_corpus.run("demo", {"pypi": "Demo.Pkg==1.2.0", "sha256": sha, "include": ["src/**"]},
                           tree, man, [], {"pypi": index})
    assert (tree / "src" / "demo_pkg" / "core.py").read_text() == "def go():\n    pass\n"
    assert m["pin"] == {"kind": "pypi", "pypi": "Demo.Pkg==1.2.0", "sha256": sha}
    assert m["origin"] == {"source": f"{base}/files/demo_pkg-1.2.0.tar.gz"}


def test_pypi_sha256_mismatch_leaves_nothing_behind(registry, tmp_path):
    base, routes = registry
    index = serve_pypi(base, routes)
    results = tmp_path / "results"
    tree, man = results / "demo" / "tree", results / "demo" / "manifest.json"
    with pytest.raises(CrmatrixError) as e:
        fetch_corpus.run("demo", {"pypi": "demo-pkg==1.2.0", "sha256": "0" * 64}, tree, man, [], {"pypi": index})
    assert str(e.value) == (f"pypi pin demo-pkg==1.2.0: sha256 mismatch for {base}/files/demo_pkg-1.2.0.tar.gz: "
                            f"expected {'0' * 64}, got {hashlib.sha256(SDIST).hexdigest()}")
    assert not results.exists() or not any(results.rglob("*"))


def test_pypi_missing_version_and_failed_download(registry, tmp_path):
    base, routes = registry
    index = serve_pypi(base, routes)
    with pytest.raises(CrmatrixError, match=r"no sdist \(\.tar\.gz\) for version 9\.9"):
        pins.fetch_pypi("demo-pkg==9.9", "0" * 64, tmp_path / "a", index)
    with pytest.raises(CrmatrixError, match=rf"download failed: {base}/simple/absent/: HTTP Error 404"):
        pins.fetch_pypi("absent==1.0", "0" * 64, tmp_path / "b", index)


def test_pypi_names_and_versions_compare_normalized(registry, tmp_path):
    base, routes = registry
    index = serve_pypi(base, routes)
    routes["/simple/demo-pkg/"] = json.dumps({"files": [
        {"filename": "demo-pkg-1.2.tar.gz.asc", "url": "/files/sig", "hashes": {}},
        {"filename": "demo_pkg-latest.tar.gz", "url": "/files/latest.tar.gz", "hashes": {}},
        {"filename": "Demo.Pkg-1.2.0.tar.gz", "url": "/files/demo_pkg-1.2.0.tar.gz", "hashes": {}},
    ]}).encode()
    sha = hashlib.sha256(SDIST).hexdigest()
    assert pins.fetch_pypi("demo_PKG==1.2", sha, tmp_path / "a", index) == {
        "source": f"{base}/files/demo_pkg-1.2.0.tar.gz"}


@pytest.mark.parametrize("spec", ["demo-pkg", "demo-pkg>=1.2", "demo-pkg==1.*", "demo-pkg[cli]==1.2",
                                  "demo-pkg==1.2; python_version>'3'", "demo-pkg==1.2,==1.3", "==1.2"])
def test_pypi_pin_must_be_one_exact_version(spec, tmp_path):
    with pytest.raises(CrmatrixError) as e:
        pins.fetch_pypi(spec, "0" * 64, tmp_path, "http://127.0.0.1:9/simple")
    assert str(e.value) == f"pypi pin {spec!r}: expected 'name==version'"


def test_transient_failures_are_retried_and_the_bytes_are_those_of_the_good_attempt(registry, tmp_path):
    base, routes = registry
    index = serve_pypi(base, routes)
    routes["/files/demo_pkg-1.2.0.tar.gz"] = [503, Cut(SDIST[:100], len(SDIST)), SDIST]
    sha = hashlib.sha256(SDIST).hexdigest()
    dest = tmp_path / "d"
    assert pins.fetch_pypi("demo-pkg==1.2.0", sha, dest, index) == {"source": f"{base}/files/demo_pkg-1.2.0.tar.gz"}
    assert routes.requests.count("/files/demo_pkg-1.2.0.tar.gz") == 3
    assert (dest / "src" / "demo_pkg" / "core.py").read_text() == "def go():\n    pass\n"


def test_a_404_is_never_retried_and_a_lasting_5xx_gives_up(registry, tmp_path):
    base, routes = registry
    with pytest.raises(CrmatrixError) as e:
        pins.download(f"{base}/gone", tmp_path / "f", ["sha256"])
    assert str(e.value) == f"download failed: {base}/gone: HTTP Error 404: Not Found"
    assert routes.requests == ["/gone"]
    routes["/down"] = 502
    with pytest.raises(CrmatrixError) as e:
        pins.download(f"{base}/down", tmp_path / "f", ["sha256"])
    assert str(e.value) == f"download failed: {base}/down: HTTP Error 502: Bad Gateway (after 4 attempts)"
    assert routes.requests.count("/down") == 4
    routes["/cut"] = Cut(b"x" * 10, 50)
    with pytest.raises(CrmatrixError) as e:
        pins.download(f"{base}/cut", tmp_path / "f", ["sha256"])
    assert str(e.value) == (f"download failed: {base}/cut: connection closed after 10 bytes, 40 more announced "
                            "(after 4 attempts)")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("response", [b"x" * 5000, Unsized(b"x" * 5000)], ids=["announced", "streamed"])
def test_a_download_over_the_cap_stops_and_leaves_nothing(registry, tmp_path, response):
    base, routes = registry
    routes["/big"] = response
    with pytest.raises(CrmatrixError) as e:
        pins.download(f"{base}/big", tmp_path / "big", ["sha256"], max_bytes=1000)
    assert str(e.value) == f"download failed: {base}/big: more than 1000 bytes (the download limit)"
    assert routes.requests == ["/big"]  # not retried
    assert list(tmp_path.iterdir()) == []
    routes["/small"] = Unsized(b"x" * 1000)
    assert pins.download(f"{base}/small", tmp_path / "s", ["sha256", "sha512"], max_bytes=1000) == {
        "sha256": hashlib.sha256(b"x" * 1000).digest(), "sha512": hashlib.sha512(b"x" * 1000).digest()}
    assert (tmp_path / "s").read_bytes() == b"x" * 1000


def test_npm_tarball_is_fetched_and_integrity_checked(registry, tmp_path):
    base, routes = registry
    routes["/@scope%2fdemo/1.0.0"] = json.dumps({"dist": {"tarball": f"{base}/t/demo-1.0.0.tgz"}}).encode()
    routes["/t/demo-1.0.0.tgz"] = NPM_TGZ
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(NPM_TGZ).digest()).decode()
    dest = tmp_path / "n"
    dest.mkdir()
    assert pins.fetch_npm("@scope/demo@1.0.0", integrity, dest, base) == {"source": f"{base}/t/demo-1.0.0.tgz"}
    assert (dest / "lib" / "index.js").read_text() == "function go() {}\n"
    bad = "sha512-" + base64.b64encode(hashlib.sha512(b"other").digest()).decode()
    with pytest.raises(CrmatrixError, match=r"^npm pin @scope/demo@1\.0\.0: integrity mismatch: expected sha512-"):
        pins.fetch_npm("@scope/demo@1.0.0", bad, tmp_path / "n2", base)
    with pytest.raises(CrmatrixError, match=r"is not of the form sha512-<base64>"):
        pins.fetch_npm("@scope/demo@1.0.0", "md5-abc", tmp_path / "n3", base)


def test_git_pin_checks_out_the_pinned_commit_not_the_head(two_commit_repo, tmp_path):
    repo, first, _ = two_commit_repo
    tree, man = tmp_path / "r" / "tree", tmp_path / "r" / "manifest.json"
    m = fetch_corpus.run("g", {"git": str(repo), "commit": first}, tree, man, [], {})
    assert [f["path"] for f in m["files"]] == ["pkg/core.py"]
    assert "def parse_config" in (tree / "pkg" / "core.py").read_text()
    assert not (tree / ".git").exists()


def test_git_commit_found_nowhere_lists_every_place_tried(two_commit_repo, tmp_path):
    repo, *_ = two_commit_repo
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    missing = "1" * 40
    with pytest.raises(CrmatrixError) as e:
        pins.fetch_git(str(repo), missing, tmp_path / "out", [str(mirror), str(tmp_path / "nodir")])
    lines = str(e.value).splitlines()
    assert lines[0] == f"commit {missing} of {repo} found nowhere; tried:"
    assert lines[1] == f"  mirror {mirror}: no tmp+repo@*.bundle" .replace("tmp+repo", f"{repo.parent.name}+repo")
    assert lines[2] == f"  mirror {tmp_path / 'nodir'}: no such directory"
    assert lines[3].startswith(f"  {repo}: ")


def test_git_mirror_bundle_is_used_before_the_url(two_commit_repo, tmp_path):
    repo, first, second = two_commit_repo
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    git(repo, "bundle", "create", str(mirror / f"acme+widget@{second[:8]}.bundle"), "HEAD")
    dest = tmp_path / "out"
    origin = pins.fetch_git("https://example.invalid/acme/widget.git", second, dest, [str(mirror)])
    assert origin == {"source": str(mirror / f"acme+widget@{second[:8]}.bundle")}
    assert (dest / "pkg" / "later.py").exists()
    with pytest.raises(CrmatrixError) as e:
        pins.fetch_git("https://example.invalid/acme/widget.git", first, tmp_path / "o2", [str(mirror)])
    assert f"mirror bundle {mirror}/acme+widget@{second[:8]}.bundle: holds {second}" in str(e.value)


@needs_shared
def test_shared_mirror_bundle_of_ripgrep(tmp_path):
    commit = "3fce3b5bb0236da2df6d99672afb8a719642eca7"
    tree, man = tmp_path / "rg" / "tree", tmp_path / "rg" / "manifest.json"
    m = fetch_corpus.run("ripgrep", {"git": "https://github.com/BurntSushi/ripgrep", "commit": commit,
                                        "include": ["crates/**/*.rs"], "exclude": ["**/tests/**"]},
                           tree, man, [str(SHARED / "corpora")], {})
    assert m["origin"]["source"].endswith("BurntSushi+ripgrep@3fce3b5b.bundle")
    assert languages.dominant_language(m) == "rust"
    assert "crates/regex/src/matcher.rs" in {f["path"] for f in m["files"]}


def test_owner_repo_stem():
    assert pins.bundle_stem("https://github.com/BurntSushi/ripgrep") == "BurntSushi+ripgrep"
    assert pins.bundle_stem("git@github.com:pallets/flask.git") == "pallets+flask"
    assert pins.bundle_stem("/src/checkouts/repo/") == "checkouts+repo"


def test_path_fingerprint_changes_on_edit(tmp_path):
    (tmp_path / "a.py").write_text("x")
    before = pins.path_fingerprint(str(tmp_path))
    assert pins.path_fingerprint(str(tmp_path)) == before
    (tmp_path / "a.py").write_text("xy")
    assert pins.path_fingerprint(str(tmp_path)) != before


def bundle_mirrors(tmp_path, repo, commit, *kinds):
    """One mirror directory per kind, each holding acme+widget@<sha8>.bundle: a good copy, a
    copy cut inside its pack data, or a file that is no bundle at all."""
    good = tmp_path / "good.bundle"
    git(repo, "bundle", "create", str(good), "HEAD")
    data = good.read_bytes()
    mirrors = []
    for i, kind in enumerate(kinds):
        m = tmp_path / f"mirror{i}"
        m.mkdir()
        body = {"good": data, "truncated": data[: len(data) - 40], "garbage": b"not a bundle\n"}[kind]
        (m / f"acme+widget@{commit[:8]}.bundle").write_bytes(body)
        mirrors.append(m)
    return mirrors


def test_a_corrupt_mirror_bundle_is_passed_over_for_the_next_mirror(two_commit_repo, tmp_path, caplog):
    repo, _, second = two_commit_repo
    bad, junk, good = bundle_mirrors(tmp_path, repo, second, "truncated", "garbage", "good")
    dest = tmp_path / "out"
    dest.mkdir()
    origin = pins.fetch_git(str(tmp_path / "acme" / "widget"), second, dest, [str(bad), str(junk), str(good)])
    assert origin == {"source": str(good / f"acme+widget@{second[:8]}.bundle")}
    assert sorted(p.name for p in dest.rglob("*")) == ["core.py", "later.py", "pkg"]
    name = f"acme+widget@{second[:8]}.bundle"
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", f"passed over {bad / name}: lists the commit but cannot be checked out (fatal: early EOF)"),
        ("WARNING", f"passed over {junk / name}: not a readable git bundle "
                    "(it does not begin with a v2 or v3 bundle signature)"),
    ]


def test_only_corrupt_bundles_are_listed_with_the_url_and_leave_nothing(two_commit_repo, tmp_path):
    repo, _, second = two_commit_repo
    bad, junk = bundle_mirrors(tmp_path, repo, second, "truncated", "garbage")
    url = tmp_path / "acme" / "widget"
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(CrmatrixError) as e:
        pins.fetch_git(str(url), second, dest, [str(bad), str(junk)])
    name = f"acme+widget@{second[:8]}.bundle"
    assert str(e.value).splitlines() == [
        f"commit {second} of {url} found nowhere; tried:",
        f"  mirror bundle {bad / name}: lists the commit but cannot be checked out (fatal: early EOF)",
        f"  mirror bundle {junk / name}: not a readable git bundle "
        "(it does not begin with a v2 or v3 bundle signature)",
        f"  {url}: fatal: repository '{url}' does not exist",
    ]
    assert list(dest.iterdir()) == []


def test_path_fingerprint_sees_an_edit_that_keeps_size_and_mtime(tmp_path):
    f = tmp_path / "pkg" / "a.py"
    f.parent.mkdir()
    f.write_text("x = 1\n")
    st = f.stat()
    before = pins.path_fingerprint(str(tmp_path))
    f.write_text("x = 2\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    assert pins.path_fingerprint(str(tmp_path)) != before


def test_path_fingerprint_is_the_contents_not_where_the_tree_is(tmp_path, copy_tree):
    a = tmp_path / "a"
    (a / "pkg").mkdir(parents=True)
    (a / "pkg" / "core.py").write_text("def core():\n    pass\n")
    (a / "README.md").write_text("readme\n")
    b = copy_tree(a, tmp_path / "elsewhere" / "b")
    os.utime(b / "README.md", (0, 0))
    assert pins.path_fingerprint(str(b)) == pins.path_fingerprint(str(a))
    (b / "pkg" / "core.py").rename(b / "pkg" / "moved.py")  # a rename is a change
    assert pins.path_fingerprint(str(b)) != pins.path_fingerprint(str(a))


def test_path_fingerprint_passes_over_what_no_corpus_holds(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    big = tmp_path / "data.bin"
    big.write_bytes(b"a" * (MAX_FILE_BYTES + 1))
    os.mkfifo(tmp_path / "pipe")  # never opened: this would hang
    before = pins.path_fingerprint(str(tmp_path))
    for skipped in (".git", "__pycache__", "node_modules"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x.py").write_text("changed\n")
    big.write_bytes(b"b" * (MAX_FILE_BYTES + 1))  # too large to be in a corpus, whatever it holds
    assert pins.path_fingerprint(str(tmp_path)) == before
    big.write_bytes(b"b" * MAX_FILE_BYTES)  # now small enough to be read: its bytes count
    assert pins.path_fingerprint(str(tmp_path)) != before


def test_a_pin_kind_registered_by_name_is_read_checked_and_fetched(tmp_path, monkeypatch):
    """Pins dispatch through a registry as system types and dataset formats do: a kind registered
    in the process is read off a corpus entry, its pinning key required and checked, and fetched."""
    pins.KINDS.own_names()  # the builtins registered first, so that the copy below holds them
    monkeypatch.setattr(pins.KINDS, "own", dict(pins.KINDS.own))
    checked, fetched = [], []

    @pins.register("zipdir", pinned_by="digest", check=lambda key, value: checked.append((key, value)))
    def fetch_zipdir(spec, scratch, mirrors, registries):
        fetched.append((spec, scratch, mirrors, registries))
        return scratch, {"source": spec["zipdir"]}

    pin = pins.Pin.from_config("c", {"zipdir": "x.zip", "digest": "d1", "include": ["**"]})
    assert pin == pins.Pin("zipdir", {"zipdir": "x.zip", "digest": "d1"})
    assert checked == [("corpora.c.digest", "d1")]
    assert pins.fetch(pin, tmp_path, ["m"], {"pypi": "i"}) == (tmp_path, {"source": "x.zip"})
    assert fetched == [({"zipdir": "x.zip", "digest": "d1"}, tmp_path, ["m"], {"pypi": "i"})]
    with pytest.raises(CrmatrixError) as e:
        pins.Pin.from_config("c", {"zipdir": "x.zip"})
    assert str(e.value) == "corpora.c: a zipdir corpus needs 'digest' to pin it"
    with pytest.raises(CrmatrixError) as e:
        pins.Pin.from_config("c", {"zipdir": "x.zip", "git": "u", "commit": "0" * 40})
    assert str(e.value) == "corpora.c: needs exactly one of git, npm, path, pypi, zipdir (found ['git', 'zipdir'])"
    # a kind written out of a benchmark file is the write_corpus stage's, never fetched
    with pytest.raises(CrmatrixError) as e:
        pins.fetch(pins.Pin("repoqa", {"repoqa": {}}), tmp_path, [], {})
    assert str(e.value) == "unknown pin kind 'repoqa' (known: git, npm, path, pypi, zipdir)"
