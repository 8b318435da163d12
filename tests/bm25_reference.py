"""A whole-file BM25 written to be obviously right, to hold the engine's whole-file ranking to.

Okapi BM25 with bm25s's defaults, which the engine builds with (crmatrix.engine.bm25:
`bm25s.BM25()`, method "lucene"): k1 = 1.5, b = 0.75, and for a document d and query q

    score(d, q) = sum over q's tokens t (a repeated token counts each time) of
                  idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with N the documents, df(t) those holding t, |d| d's token count and avgdl its mean; a query
token no document holds adds nothing. Here in float64, the engine in float32.

Tokenization is the engine's (crmatrix.engine.bm25.Tokenizer), restated step by step rather
than imported: each identifier spelled as its words (crmatrix.identifiers.words, the one rule
the engine and the datasets share), lowercased, the words of bm25s's pattern `(?u)\\b\\w\\w+\\b`,
bm25s's English stopwords dropped, Snowball's English stemmer (PyStemmer). The unit test holds
the two tokenizers and the scores to the engine's and bm25s's on sample texts.

A document is whatever text the caller gives for a file (the engine's whole-file document
must be given the same way). Ranked: every file some query token occurs in, by score, ties
by path; a file no query token occurs in is not ranked.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from crmatrix.identifiers import words

K1, B = 1.5, 0.75
_WORD = re.compile(r"(?u)\b\w\w+\b")
_IDENTIFIER = re.compile(r"\w+")
_STEMMER = Stemmer.Stemmer("english")


def spelled(text: str) -> str:
    """`text` with each identifier spelled as its words: "load parseHTTPResponse" -> "load parse HTTP Response"."""
    return _IDENTIFIER.sub(lambda m: " ".join(words(m.group())), text)


def tokens(text: str) -> list[str]:
    spelled_text = spelled(text).lower()
    return [_STEMMER.stemWord(w) for w in _WORD.findall(spelled_text) if w not in STOPWORDS_EN]


def scores(files: Mapping[str, str], query: str) -> dict[str, float]:
    """Each file's BM25 score for the query."""
    counts = {path: Counter(tokens(text)) for path, text in files.items()}
    lengths = {path: sum(c.values()) for path, c in counts.items()}
    n = len(files)
    avgdl = sum(lengths.values()) / n
    df = Counter(t for c in counts.values() for t in c)
    out = {}
    for path, c in counts.items():
        total = 0.0
        for t in tokens(query):
            if df[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                total += idf * c[t] / (c[t] + K1 * (1 - B + B * lengths[path] / avgdl))
        out[path] = total
    return out


def rank_files(files: Mapping[str, str], query: str) -> list[str]:
    """The files some query token occurs in, best first, ties by path."""
    s = scores(files, query)
    return sorted((p for p, v in s.items() if v > 0), key=lambda p: (-s[p], p))


def acc_at(ranked: list[str], gold: Iterable[str], k: int) -> float:
    """1 when every gold file is within the top k (LocAgent's and SweRank's Acc@k)."""
    top = set(ranked[:k])
    gold = set(gold)
    return 1.0 if gold and gold <= top else 0.0
