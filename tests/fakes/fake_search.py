"""A fake code-search CLI for the command adapter's tests (stdlib only).

    fake_search.py index CORPUS OUT          # writes OUT/fake-index.json
    fake_search.py search INDEX QUERY K      # {"data": {"symbols": [{name, file, line, score}]}}
    fake_search.py batch INDEX QUERIES K     # {"results": [<one search answer per query>]}
    fake_search.py context INDEX QUERY K     # a blob: {"context": text, "cited": [{name, file, line}]}

Symbols are `def`/`class` lines; a symbol scores the number of query words in its name.
FAKE_RANKING=weakest-first inverts the scores (so arms differ). FAKE_MODE holds `|`-separated
directives, each acting on queries containing TEXT: crash-on:TEXT (exit 3), hang-on:TEXT
(sleep, with a child in the same process group), garbage-on:TEXT (not JSON), empty-on:TEXT
(no output), none-on:TEXT (an answer listing no symbol), nothing-on:TEXT (no symbol, and the
tool's own "No results found"), outside-on:TEXT (its symbols at paths the corpus has not),
basename-on:TEXT (each file by its name alone, as a tool answering paths relative to their own
directory: paths that name nothing of the corpus). FAKE_NOTE=TEXT: every search answer starts
with {"note": TEXT}. Every call writes the
environment it saw to $HOME/last-env.json, and each query asked adds a line to $HOME/asked.txt.
FAKE_INDEX_IN_HOME=1: the index lives under $HOME instead of INDEX (as some tools keep it),
so a search finds it only in the HOME its index command had.

Its corpus (the index command's CORPUS, a search's $FAKE_CORPUS): FAKE_WRITE_CORPUS=REL makes
every call write REL into it, as a tool keeping its index beside the files it reads; with
FAKE_FORCE_WRITE=1 it first makes the directories on the way (and REL, if it exists) writable.
FAKE_WALK_UP=1: a search records in $HOME/walked-up.json what it finds above its corpus and its
working directory: each directory holding .git or pyproject.toml, and `git rev-parse
--show-toplevel` run from each (null: not in a repository). FAKE_ABSOLUTE=1: a search answers
each file by its absolute path under $FAKE_CORPUS.

tests/fakes/tool makes it an installable project (`crmatrix-fake-tool`, script `fake-search`).
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

DEF = re.compile(r"^[ \t]*(?:def|class)\s+(\w+)", re.M)


def index(corpus: Path, out: Path) -> None:
    symbols = []
    for f in sorted(corpus.rglob("*.py")):
        text = f.read_text()
        for m in DEF.finditer(text):
            symbols.append({"name": m[1], "file": f.relative_to(corpus).as_posix(),
                            "line": text.count("\n", 0, m.start()) + 1})
    out.mkdir(parents=True, exist_ok=True)
    (out / "fake-index.json").write_text(json.dumps({"symbols": symbols, "seen_home": os.environ["HOME"]}))


def modes(query: str) -> set[str]:
    found = set()
    for directive in filter(None, os.environ.get("FAKE_MODE", "").split("|")):
        mode, _, text = directive.partition(":")
        if text and text in query:
            found.add(mode)
    return found


def rank(symbols: list[dict], query: str, k: int) -> list[dict]:
    words = set(re.findall(r"[a-z0-9]+", query.lower()))
    weakest = os.environ.get("FAKE_RANKING") == "weakest-first"
    out = []
    for s in symbols:
        n = len(words & set(s["name"].lower().split("_")))
        if n:
            out.append({**s, "score": 1 / n if weakest else float(n)})
    if "basename-on" in modes(query):
        out = [{**s, "file": s["file"].rsplit("/", 1)[-1]} for s in out]
    return sorted(out, key=lambda s: (-s["score"], s["file"], s["line"]))[:k]


def asked(queries: list[str]) -> None:
    with open(Path(os.environ["HOME"], "asked.txt"), "a") as f:
        f.writelines(q + "\n" for q in queries)


def act(query: str) -> None:
    m = modes(query)
    if "crash-on" in m:
        print(f"fake_search: crashing on {query!r}", file=sys.stderr)
        sys.exit(3)
    if "hang-on" in m:
        child = os.fork()
        if child == 0:
            time.sleep(3600)
            os._exit(0)
        (Path(os.environ["HOME"]) / f"hang-{os.getpid()}.pids").write_text(f"{os.getpid()} {child}")
        time.sleep(3600)
    if "garbage-on" in m:
        print("this is not JSON")
        sys.exit(0)
    if "empty-on" in m:
        sys.exit(0)


def write_corpus(corpus: Path, rel: str) -> None:
    target = corpus / rel
    if os.environ.get("FAKE_FORCE_WRITE") == "1":
        for d in [corpus, *(corpus / p for p in Path(rel).parents[:-1][::-1])]:
            if d.is_dir():
                d.chmod(0o755)
        if target.exists():
            target.chmod(0o644)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a") as f:
        f.write("written by the tool\n")


def toplevel(where: Path) -> str | None:
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=where, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def walk_up(corpus: Path) -> None:
    found = sorted({str(d) for start in (corpus, Path.cwd()) for d in start.resolve().parents
                    if (d / ".git").exists() or (d / "pyproject.toml").exists()})
    seen = {"projects": found, "git_from_corpus": toplevel(corpus), "git_from_cwd": toplevel(Path.cwd())}
    Path(os.environ["HOME"], "walked-up.json").write_text(json.dumps(seen))


def main(argv: list[str]) -> None:
    Path(os.environ["HOME"], "last-env.json").write_text(json.dumps(dict(os.environ)))
    cmd = argv[0]
    if "FAKE_WRITE_CORPUS" in os.environ:
        write_corpus(Path(argv[1] if cmd == "index" else os.environ["FAKE_CORPUS"]), os.environ["FAKE_WRITE_CORPUS"])
    if cmd != "index" and os.environ.get("FAKE_WALK_UP") == "1":
        walk_up(Path(os.environ["FAKE_CORPUS"]))
    in_home = os.environ.get("FAKE_INDEX_IN_HOME") == "1"
    if cmd == "index":
        index(Path(argv[1]), Path(os.environ["HOME"], "fake-index") if in_home else Path(argv[2]))
        return
    where = Path(os.environ["HOME"], "fake-index") if in_home else Path(argv[1])
    symbols = json.loads((where / "fake-index.json").read_text())["symbols"]
    k = int(argv[3])
    if cmd == "batch":
        queries = json.loads(Path(argv[2]).read_text())
        asked(queries)
        for q in queries:
            act(q)
        print(json.dumps({"results": [{"data": {"symbols": rank(symbols, q, k)}} for q in queries]}))
        return
    query = argv[2]
    asked([query])
    act(query)
    hits = rank(symbols, query, k)
    m = modes(query)
    if m & {"none-on", "nothing-on"}:
        said = {"message": f"No results found for {query!r}"} if "nothing-on" in m else {}
        print(json.dumps({**said, "data": {"symbols": []}}))
        return
    if "outside-on" in m:
        hits = [{**h, "file": "vendored/" + h["file"].replace("/", "_")} for h in hits]
    if os.environ.get("FAKE_ABSOLUTE") == "1":
        hits = [{**h, "file": str(Path(os.environ["FAKE_CORPUS"], h["file"]))} for h in hits]
    note = {"note": os.environ["FAKE_NOTE"]} if "FAKE_NOTE" in os.environ else {}
    if cmd == "context":
        text = "\n\n".join(f"# {h['file']}:{h['line']} {h['name']}" for h in hits)
        print(json.dumps({"context": text, "cited": hits}))
    else:
        print(json.dumps({**note, "data": {"symbols": hits}}, ensure_ascii=False))


def cli() -> None:
    """The console script `fake-search` of the installable fake (tests/fakes/tool)."""
    main(sys.argv[1:])


if __name__ == "__main__":
    cli()
