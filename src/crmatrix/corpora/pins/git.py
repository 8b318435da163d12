"""A git pin: a full commit id, checked out from a mirror's bundle first, then from its URL.

Mirrors are directories of bundles named `<owner>+<repo>@<anything>.bundle`
(crmatrix.pipeline.locations: the config's `git_mirrors` and CRMATRIX_GIT_MIRRORS): a
single-commit bundle `@<sha8>`, or a multi-commit one such as `@swebench`, which
crmatrix.corpora.pins.gitstore reads.
"""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.corpora.pins.pin import register

log = logging.getLogger(__name__)

_SHA40 = re.compile(r"^[0-9a-f]{40}$")


def check_commit(key: str, commit) -> None:
    """A git pin names a full commit id: a branch, a tag or a short id may move or collide."""
    if not _SHA40.match(str(commit)):
        raise CrmatrixError(f"{key}: expected a full 40-hex commit id, got {commit!r}")


def bundle_stem(url: str) -> str:
    """`https://github.com/BurntSushi/ripgrep(.git)` -> `BurntSushi+ripgrep`, the mirror bundle stem."""
    parts = [p for p in re.split(r"[/:]", url.rstrip("/")) if p]
    parts[-1] = parts[-1].removesuffix(".git")
    return "+".join(parts[-2:]) if len(parts) >= 2 else parts[-1]


BUNDLE_SIGNATURES = (b"# v2 git bundle\n", b"# v3 git bundle\n")


def git_reason(e) -> str:
    """The line of a failed git command that says why: its first `fatal:`/`error:` line
    (the cause; later ones such as "index-pack died" are its consequences), else its last line."""
    text = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or str(e)
    text = text.strip().removeprefix("stderr:").strip().strip("'")  # GitPython quotes git's stderr
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else str(e))


def bundle_refs(bundle: Path) -> list[tuple[str, str]]:
    """(commit, ref) of every head a bundle lists, as `git bundle list-heads` prints them, read
    from the bundle's header (gitformat-bundle: a v2 or v3 signature line, `@` capabilities, `-`
    prerequisites, then `<commit> <ref>` lines up to an empty line). Read here, not by git:
    planning lists every repository's bundles, and a git process each was a tenth of a second
    of every planning of config/swe-bench.yaml."""
    try:
        with open(bundle, "rb") as f:
            if f.readline() not in BUNDLE_SIGNATURES:
                raise CrmatrixError(f"{bundle}: not a readable git bundle (it does not begin with a v2 or v3 bundle "
                                    "signature)")
            refs = []
            for line in f:
                if line == b"\n":
                    return refs
                if not line.startswith((b"@", b"-")):
                    commit, _, ref = line.rstrip(b"\n").decode("utf-8", "replace").partition(" ")
                    refs.append((commit, ref))
    except OSError as e:
        raise CrmatrixError(f"{bundle}: not a readable git bundle ({e.strerror})") from None
    raise CrmatrixError(f"{bundle}: not a readable git bundle (its header has no end)")


def bundle_heads(bundle: Path) -> set[str]:
    return {commit for commit, _ in bundle_refs(bundle)}


def _checkout(source: str, commit: str, dest: Path, shallow: bool) -> None:
    """Check `commit` out into dest without .git; on failure dest is left empty for the next source."""
    import git

    try:
        repo = git.Repo.clone_from(source, dest, no_checkout=True)
        if shallow:  # a single-commit bundle lacks the parent; git must be told the history stops here
            (dest / ".git" / "shallow").write_text(commit + "\n")
        repo.git.checkout("--detach", commit)
    except git.GitCommandError as e:
        _empty(dest)
        raise CrmatrixError(git_reason(e)) from e
    shutil.rmtree(dest / ".git")


def _empty(directory: Path) -> None:
    """Remove what a failed clone left in `directory`, keeping the directory (the caller's)."""
    for child in directory.iterdir() if directory.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _from_bundle(bundle: Path, commit: str, dest: Path) -> str | None:
    """None when `commit` was checked out from `bundle`, else the line saying why not.

    A broken bundle is also logged: the search may succeed elsewhere, and the mirror
    still wants mending.
    """
    try:
        heads = bundle_heads(bundle)
    except CrmatrixError as e:
        log.warning("passed over %s", e)
        return str(e)
    if commit not in heads:
        return f"{bundle}: holds {', '.join(sorted(heads)) or 'no commit'}"
    try:
        _checkout(str(bundle), commit, dest, shallow=True)
    except CrmatrixError as e:
        why = f"{bundle}: lists the commit but cannot be checked out ({e})"
        log.warning("passed over %s", why)
        return why
    return None


def fetch_git(url: str, commit: str, dest: Path, mirrors: list[str]) -> dict:
    """Check out `commit` into dest (without .git), from a mirror bundle first, then from url.

    A bundle that is corrupt or truncated is one line of the places tried, not the end of
    the search: the next bundle, mirror, then the url may still hold the commit.
    """
    tried: list[str] = []
    stem = bundle_stem(url)
    for mirror in mirrors:
        mdir = Path(mirror)
        bundles = mirror_bundles(mdir, stem)
        if not mdir.is_dir():
            tried.append(f"mirror {mirror}: no such directory")
        elif not bundles:
            tried.append(f"mirror {mirror}: no {stem}@*.bundle")
        for b in bundles:
            why_not = _from_bundle(b, commit, dest)
            if why_not is None:
                return {"source": str(b)}
            tried.append(f"mirror bundle {why_not}")
    try:  # dest is the caller's scratch: a failed clone leaves nothing the caller keeps
        _checkout(url, commit, dest, shallow=False)
        return {"source": url}
    except CrmatrixError as e:
        tried.append(f"{url}: {e}")
    raise CrmatrixError(f"commit {commit} of {url} found nowhere; tried:\n  " + "\n  ".join(tried))


def glob_escape(s: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", s)


def mirror_bundles(mirror: Path, stem: str) -> list[Path]:
    """The bundles of repository `stem` (`<owner>+<repo>`) in a mirror directory, by name."""
    return sorted(mirror.glob(f"{glob_escape(stem)}@*.bundle")) if mirror.is_dir() else []


@register("git", pinned_by="commit", check=check_commit)
def fetch_pinned(spec: dict, scratch: Path, mirrors: list[str], registries: dict) -> tuple[Path, dict]:
    """A git pin's commit, checked out into `scratch` (from a mirror's bundle first)."""
    return scratch, fetch_git(spec["git"], spec["commit"], scratch, mirrors)
