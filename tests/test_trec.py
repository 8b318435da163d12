"""TREC run and qrels files, line by line: tools re-score by the score column, so the rank
column is checked here (a run starting at rank 0 scored the same in ir_measures)."""

from crmatrix.evaluation import trec


def test_run_lines_are_one_based_with_rank_derived_scores(tmp_path):
    trec.write_run(tmp_path / "run", {"q2": ["b.py:3:g"], "q1": ["a.py:1:f", "a b.py:9:h", "c.py:2:k"]}, "sys.arm m")
    assert (tmp_path / "run").read_text().splitlines() == [
        "q1 Q0 a.py:1:f 1 3 sys.arm_m",
        "q1 Q0 a_b.py:9:h 2 2 sys.arm_m",
        "q1 Q0 c.py:2:k 3 1 sys.arm_m",
        "q2 Q0 b.py:3:g 1 1 sys.arm_m",
    ]


def test_qrels_are_sorted_binary_judgments_without_repeats(tmp_path):
    trec.write_qrels(tmp_path / "qrels", {"q2": ["z:1:a", "b:1:c", "z:1:a"], "q1": ["x:2:y"]})
    assert (tmp_path / "qrels").read_text() == "q1 0 x:2:y 1\nq2 0 b:1:c 1\nq2 0 z:1:a 1\n"
