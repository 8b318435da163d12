"""Token efficiency: what an agent reads to answer a query with the system under test,
against what it reads with grep-and-read, side by side with whether each found the gold.

The baseline is the seed's agent without a search tool: search the query's salient words
in the corpus (case-insensitive fixed strings, as `rg -i -F`; the words are the query's
alphanumeric runs, lowercased, minus English stopwords and words under MIN_WORD letters),
rank the files by how many distinct words they contain, then by total occurrences, then
by path, and read the top READ_FILES files, the first READ_LINES lines of each (the
seed's 3 files × 200 lines). Its cost is the cl100k tokens of what was read, each file
headed by its path; it found the gold when the gold symbol's first line was among the
lines read. All of it is deterministic: no timing, no randomness, one tie-break.

The system's cost is its run's response tokens (its first hits as JSON, or a blob's
text); it found the gold when the gold is among those hits. The table per query type
gives both costs, the saving (1 − system/baseline over the type's totals) and both hit
rates, and the saving again over the queries both found: savings at equal quality. A failed
query, or an answer that listed no hit (`empty`), costs next to nothing and saves nothing an
agent wanted: the tokens and savings leave them out (`excluded`), the hit rates count them
as misses.
"""

from __future__ import annotations

import bisect
import itertools
import re
from pathlib import Path

from crmatrix.datasets.relevance import relevant_by_task
from crmatrix.datasets.tasks import Task
from crmatrix.evaluation.tokens import count_tokens
from crmatrix.symbols import Symbol

READ_FILES = 3
READ_LINES = 200
MIN_WORD = 3
STOPWORDS = frozenset("""
a about above after again against all also an and any are as at be because been before being below between
both but by can could did do does doing down during each else every few for from further had has have having
how however if in into is it its itself just may might more most must no nor not now of off on once only or
other our out over own same should so some such than that the their them then there these they this those
through to too under until up upon very via was we were what when where whether which while who whom whose
why will with within without would yet you your
""".split())
_WORD = re.compile(r"[a-z0-9_]+")


def salient_words(query: str) -> list[str]:
    """The words grep is run with, in query order, each once."""
    words = [w for w in _WORD.findall(query.lower()) if len(w) >= MIN_WORD and w not in STOPWORDS]
    return list(dict.fromkeys(words))


def _read(text: str) -> str:
    return "".join(text.splitlines(keepends=True)[:READ_LINES])


class _Grep:
    """`rg -i -F -c` over the corpus's files: each word's count in each file that holds it, each
    word searched once however many queries name it. A word is first counted over all the files
    joined (by a byte no word holds, so no match spans two files): a rare one's matches are then
    found one by one, a common one's counted file by file. Files are searched as UTF-8 bytes:
    a word is ASCII, and no byte of a multi-byte character is, so the counts are the text's."""

    def __init__(self, lowered: dict[str, str]):
        self._files = {p: low.encode("utf-8") for p, low in lowered.items()}
        self._paths = list(self._files)
        self._text = b"\0".join(self._files.values())
        self._starts = list(itertools.accumulate((len(b) + 1 for b in self._files.values()), initial=0))
        self._counts: dict[str, dict[str, int]] = {}

    def counts(self, word: str) -> dict[str, int]:
        """Path -> occurrences of `word` where it occurs, counted as `str.count` counts them (no overlaps)."""
        if word not in self._counts:
            needle = word.encode("ascii")
            total, found = self._text.count(needle), {}
            if total > len(self._paths):
                found = {p: n for p, n in ((p, data.count(needle)) for p, data in self._files.items()) if n}
            elif total:
                at = self._text.find(needle)
                while at >= 0:
                    path = self._paths[bisect.bisect_right(self._starts, at) - 1]
                    found[path] = found.get(path, 0) + 1
                    at = self._text.find(needle, at + len(needle))
            self._counts[word] = found
        return self._counts[word]


def grep_and_read(tree: Path, manifest: dict, tasks: list[Task], symbols: list[Symbol]) -> dict[str, dict]:
    """Per task: the words searched, the files read, the tokens read and whether the gold was seen."""
    texts = {f["path"]: (Path(tree) / f["path"]).read_text(encoding="utf-8", errors="replace")
             for f in manifest["files"]}
    grep = _Grep({p: t.lower() for p, t in texts.items()})
    relevant = relevant_by_task(tasks, symbols)
    read_tokens: dict[str, int] = {}  # a file's head, counted once however many tasks read it
    out = {}
    for task in tasks:
        words = salient_words(task.query)
        found = [grep.counts(w) for w in words]
        ranked = []
        for path in {p for counts in found for p in counts}:
            counts = [c.get(path, 0) for c in found]
            ranked.append((-sum(n > 0 for n in counts), -sum(counts), path))
        read = [p for _, _, p in sorted(ranked)[:READ_FILES]]
        for p in read:
            if p not in read_tokens:
                read_tokens[p] = count_tokens(f"==> {p} <==\n{_read(texts[p])}")
        hit = any(s.path in read and s.start_line <= READ_LINES for s in relevant[task.task_id])
        out[task.task_id] = {"words": words, "files": read, "tokens": sum(read_tokens[p] for p in read), "hit": hit}
    return out


def _side_by_side(rows: list[dict]) -> dict:
    """Both costs per query and the savings over the rows that answered something (a failed
    query and an `empty` answer left out, `excluded`, when any is); the hit rates over every row."""
    # read off the row (crmatrix.results.run.outcome), so grep_baseline's job runs no run type
    counted = [r for r in rows if not r["failure"] and r.get("outcome") != "empty"]
    grep_tokens = sum(r["grep_tokens"] for r in counted)
    system_tokens = sum(r["response_tokens"] for r in counted)
    both = [r for r in counted if r["grep_hit"] and r["read_hit"]]
    both_grep = sum(r["grep_tokens"] for r in both)
    n, m = len(rows), len(counted)
    return {
        "n": n,
        "grep_tokens": grep_tokens / m if m else 0.0,
        "system_tokens": system_tokens / m if m else 0.0,
        "saving": 1 - system_tokens / grep_tokens if grep_tokens else None,
        "grep_hit_rate": sum(r["grep_hit"] for r in rows) / n if n else 0.0,
        "system_hit_rate": sum(r["read_hit"] for r in rows) / n if n else 0.0,
        "both_hit": len(both),
        "saving_both_hit": 1 - sum(r["response_tokens"] for r in both) / both_grep if both_grep else None,
        **({"excluded": n - m} if n > m else {}),
    }


def annotate(result: dict, grep: dict[str, dict], read_depth: int) -> None:
    """Add the baseline to each query row of a method's results (`grep_tokens`, `grep_hit`,
    `grep_files`; `read_hit`: the gold within the first `read_depth` hits, what the agent
    read), and the per-query-type table as `token_efficiency`."""
    for r in result["queries"]:
        g = grep[r["task_id"]]
        r.update(grep_tokens=g["tokens"], grep_hit=g["hit"], grep_files=g["files"],
                 read_hit=r["rank"] is not None and r["rank"] <= read_depth)
    groups: dict[str, list[dict]] = {}
    for r in result["queries"]:
        groups.setdefault(r["query_type"], []).append(r)
    result["token_efficiency"] = {
        "baseline": {"read_files": READ_FILES, "read_lines": READ_LINES, "min_word": MIN_WORD},
        "all": _side_by_side(result["queries"]),
        "by_query_type": {qt: _side_by_side(rows) for qt, rows in sorted(groups.items())},
    }
