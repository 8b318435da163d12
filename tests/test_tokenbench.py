"""The grep-and-read baseline: salient words, file ranking, what is read, and the savings table."""

from crmatrix.analysis.matrix import markdown
from crmatrix.datasets.tasks import Task
from crmatrix.evaluation import tokenbench
from crmatrix.evaluation.tokens import count_tokens
from crmatrix.results.run import TokenEfficiency
from crmatrix.symbols import Symbol


def test_salient_words_drop_stopwords_short_words_and_repeats():
    assert tokenbench.salient_words("Where is the config parsed? parse_config, the CONFIG of it") == [
        "config", "parsed", "parse_config"]


def test_grep_and_read_reads_the_best_matched_files_and_sees_the_gold(tmp_path):
    files = {"a.py": "config = 1\n", "b.py": "def parse_config():\n    config = 2\n", "c.py": "x = 0\n" * 300 +
             "def late():\n    pass  # config parsing: parse it\n", "d.py": "unrelated\n"}
    for p, t in files.items():
        (tmp_path / p).write_text(t)
    manifest = {"files": [{"path": p} for p in files]}
    symbols = [Symbol("parse_config", "function", "", "b.py", "python", 1, 2, "", "", ""),
               Symbol("late", "function", "", "c.py", "python", 301, 302, "", "", "")]
    tasks = [Task("q0", "parse the config", "short_phrase", {"symbol": "parse_config", "file_suffix": "b.py"}, "x"),
             Task("q1", "late config parsing", "natural_language", {"symbol": "late", "file_suffix": "c.py"}, "x")]
    got = tokenbench.grep_and_read(tmp_path, manifest, tasks, symbols)
    assert got["q0"]["words"] == ["parse", "config"]
    assert got["q0"]["files"] == ["b.py", "c.py", "a.py"]  # both words first, then by occurrences, then path
    assert got["q0"]["hit"] is True
    assert got["q1"]["files"] == ["c.py", "b.py", "a.py"] and got["q1"]["hit"] is False  # line 301: never read
    assert got["q0"]["tokens"] == sum(count_tokens(f"==> {p} <==\n" + "".join(
        files[p].splitlines(keepends=True)[:200])) for p in ["b.py", "c.py", "a.py"])


def test_grep_counts_each_word_per_file_as_str_count_does():
    """A word in fewer matches than there are files is found match by match, a commoner one
    counted file by file: either way each file's count is `str.count`'s, a match never spans two
    files, and a file of wider characters counts the same."""
    lowered = {"a.py": "model models _model_ mod", "b.py": "ünïcode model 北京 model", "c.py": "xxmo",
               "d.py": "del aaaa", "e.py": ""}
    grep = tokenbench._Grep(lowered)
    for word in ("model", "mod", "del", "aa", "mode", "none", "xxmo"):  # words are ASCII (salient_words)
        assert grep.counts(word) == {p: t.count(word) for p, t in lowered.items() if t.count(word)}, word
    assert grep.counts("model") == {"a.py": 3, "b.py": 2}  # c.py's "mo" and d.py's "del" are two files
    assert sum(t.count("mod") for t in lowered.values()) > len(lowered)  # the file-by-file path is taken too


def test_savings_per_query_type_with_hit_and_miss_beside_them():
    result = {"queries": [
        {"task_id": "q0", "query_type": "identifier", "rank": 1, "response_tokens": 10, "failure": None},
        {"task_id": "q1", "query_type": "identifier", "rank": None, "response_tokens": 30, "failure": None},
        {"task_id": "q2", "query_type": "natural_language", "rank": 12, "response_tokens": 50, "failure": None}]}
    grep = {"q0": {"tokens": 100, "hit": True, "files": []}, "q1": {"tokens": 100, "hit": False, "files": []},
            "q2": {"tokens": 200, "hit": True, "files": []}}
    tokenbench.annotate(result, grep, 10)
    ident = result["token_efficiency"]["by_query_type"]["identifier"]
    assert ident == {"n": 2, "grep_tokens": 100.0, "system_tokens": 20.0, "saving": 0.8, "grep_hit_rate": 0.5,
                     "system_hit_rate": 0.5, "both_hit": 1, "saving_both_hit": 0.9}
    assert result["queries"][2]["read_hit"] is False  # rank 12 is past what the agent read
    assert markdown.token_table(TokenEfficiency.from_json(result["token_efficiency"]))[2] == (
        "| identifier | 2 | 100 | 20 | 80% | 50% | 50% | 1 | 90% |")
