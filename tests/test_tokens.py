"""cl100k token counts: the ASCII path counts exactly what tiktoken's encoder counts."""

import random
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

from crmatrix.atomic import dumps_canonical
from crmatrix.evaluation import tokens

ROOT = Path(__file__).resolve().parents[1]
# the pattern's corners: contractions in any case, letter runs with one leading mark, digits in
# threes, punctuation runs with their newlines, trailing and inner whitespace, separators \x1c-\x1f
# (no whitespace to cl100k, whitespace to Python's \s), special tokens as plain text
EDGES = ["", " ", "a", "'s 'S 'LL 'Ve 're'd", "don't", "__init__", "_merge_environment_settings", "1234567",
         "x1y22z333", "  \n\n  a  ", "a \t\n", "a   ", "\r\n\r\n", "\x0b\x0c", "a\x1cb \x1d \x1f\n",
         "<|endoftext|>", "<|fim_prefix|>x", "!!!\n\n", "?\r\n", "}\n  }", "http://x.org/a?b=c&d=%20",
         "\x00\x01\x7f", "\t\tdef f():\n\t\treturn 1  \n",
         # pieces past LONG_PIECE (merged by tiktoken's byte_pair_merge): a withheld docstring's spaces
         "def f():\n" + " " * 3000 + "\n    return 1\n", "x" * 129 + " " + "ab" * 200, "=" * 500 + "\n"]


def tiktoken_count(text: str) -> int:
    return len(tokens._encoding().encode_ordinary(text))


def test_the_ascii_path_counts_what_tiktoken_counts():
    hits = [{"path": "src/requests/sessions.py", "symbol": f"Session.merge_environment_settings{i}", "kind": "method",
             "start_line": 10 * i, "end_line": 10 * i + 31, "score": 87.4 / (i + 1)} for i in range(10)]
    sources = [t for t in (p.read_text() for p in sorted((ROOT / "src" / "crmatrix").rglob("*.py"))) if t.isascii()]
    rnd = random.Random(7)
    alphabet = [chr(c) for c in range(128)] + ["'s", "'LL", "  ", "\r\n", "<|endoftext|>", "123456", "def "]
    noise = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 40))) for _ in range(3000)]
    texts = EDGES + [dumps_canonical(hits)] + sources + [line for s in sources for line in s.splitlines(True)] + noise
    assert all(t.isascii() for t in texts)
    assert [tokens.count_tokens(t) for t in texts] == [tiktoken_count(t) for t in texts]
    assert tokens.count_tokens(dumps_canonical(hits)) > 100


def test_other_text_is_counted_by_tiktoken():
    text = "def grüße(naïve):\n    return '北京' + \u00a0'x'\u2028"
    assert tokens.count_tokens(text) == tiktoken_count(text) == len(
        tiktoken.get_encoding("cl100k_base").encode_ordinary(text))


def test_a_tokens_rank_is_its_line_in_the_pinned_vocabulary():
    assert tokens._ranks() == load_tiktoken_bpe(str(tokens.install_cl100k()), expected_hash=tokens.SHA256)
