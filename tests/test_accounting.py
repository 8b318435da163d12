"""Every answer accounted (crmatrix.evaluation.accounting): a query's answer is a hit, a miss,
`empty` (it listed no hit), `unresolved` (nothing it named is of the corpus) or failed; the run
counts them per method and keeps each answer's first bytes, the leaderboard and the failures
chart show them beside the failures, the warning names the cause the answers show, and the
token table credits no empty answer with a saving. Through the command adapter on the fake
CLI of tests/fakes, whose FAKE_MODE answers nothing, or outside the corpus, on demand."""

import fixture_runs
import pytest
from test_systems import INDEXED, build_index, prepared, run, system_conf  # noqa: F401 (prepared: a fixture)

from crmatrix import CrmatrixError
from crmatrix.analysis import versus
from crmatrix.evaluation import evaluate
from crmatrix.plots import failures, frames
from crmatrix.results.run import Run, outcome
from crmatrix.stages import collect_matrix
from crmatrix.systems.answers import EXCERPT_BYTES, excerpt

# "parse config" is answered; "save value", "load value" and "delete key" are not
THREE = "{mode}-on:value|{mode}-on:key"


@pytest.fixture(scope="module")
def indexed(prepared, tmp_path_factory):  # noqa: F811
    conf = system_conf("command", INDEXED)
    return conf, build_index(prepared, tmp_path_factory.mktemp("index"), conf)


def _run(prepared, tmp_path, indexed, mode: str | None = None, **options) -> dict:  # noqa: F811
    conf, index = indexed
    if options:
        conf = system_conf("command", {**INDEXED, **options})
    return run(prepared, tmp_path, conf, env={"FAKE_MODE": THREE.format(mode=mode)} if mode else {}, index=index)


def _warning(r: dict) -> list[str]:
    return evaluate.outcome_lines("run ds/fake/a", r["methods"], ["search"])[1]


def _matrix(tmp_path, docs: dict[str, dict]):
    """The runs under these system names, their phase matrix (against `cli`) and its Markdown."""
    paths = []
    for name, r in docs.items():
        doc = {k: v for k, v in r.items() if k != "checksum"}  # the same system under another name, sealed as such
        paths.append(fixture_runs.write(tmp_path / "runs" / f"{name}.json", {**doc, "system": name}))
    m = collect_matrix.run(fixture_runs.cell_files(paths, "a", "search"), "a", "search", ["a"], {},
                           tmp_path / "m.json", tmp_path / "m.md", ledger_path=tmp_path / "ledger.json",
                           reference="cli")
    return [Run.read(p) for p in paths], m, (tmp_path / "m.md").read_text()


def test_a_tool_answering_nothing_is_empty_in_its_run_the_leaderboard_and_the_failures_chart(
        prepared, indexed, tmp_path):  # noqa: F811
    cli, mute = _run(prepared, tmp_path, indexed), _run(prepared, tmp_path, indexed, "none")
    res = mute["methods"]["search"]
    assert [outcome(q) for q in res["queries"]] == ["hit", "empty", "empty", "empty"]
    assert [q.get("outcome") for q in res["queries"]] == [None, "empty", "empty", "empty"]
    assert (res["errors"], res["empty"], "unresolved" in res, res["no_hit"], res["no_hit_warning"]) == (
        0, 3, False, 3, True)
    assert "empty" not in cli["methods"]["search"] and "no_hit_cause" not in cli["methods"]["search"]
    runs, m, md = _matrix(tmp_path, {"cli": cli, "mute": mute})
    st = {s.system: s for s in m.leaderboard.standings}
    assert (st["mute"].failed, st["mute"].empty, st["mute"].unresolved) == (0, 3, 0)
    assert (st["cli"].failed, st["cli"].empty, st["cli"].unresolved) == (0, 0, 0)
    assert "| paired | failed | empty | unresolved | p50 ms | p95 ms |" in md
    mute_line = next(line for line in md.splitlines() if " | mute | search | 1 | 4 | 0.250 | " in line)
    assert "| 4 | 0 | 3 | 0 | " in mute_line
    chart, _ = frames.leaderboard(versus.compare(runs, "cli", "search"))  # the leaderboard chart's points
    assert [(r["system"].split(" ")[0], r["failed"], r["empty"], r["unresolved"]) for r in chart.to_dict("records")] \
        == [("cli", 0, 0, 0), ("mute", 0, 3, 0)]
    by = versus.rows_by_system(runs, "search")
    df = frames.failures(by)
    assert df.to_dict("records") == [
        {"system": "cli", "outcome": "none", "kind": "none", "count": 0, "queries": 4, "label": "of 4: 0 failed"},
        {"system": "mute", "outcome": "empty", "kind": "empty", "count": 3, "queries": 4,
         "label": "of 4: 0 failed, 3 empty"}]
    drawn = failures.draw(by, ["cli", "mute"]).to_dict()
    assert "failed: empty" in drawn["layer"][0]["encoding"]["color"]["scale"]["domain"]  # a blank answer, apart


def test_a_blank_answer_stays_a_failure_beside_the_empty_ones(prepared, indexed, tmp_path):  # noqa: F811
    conf, index = indexed
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "empty-on:parse|none-on:value"}, index=index)
    res = r["methods"]["search"]
    assert [outcome(q) for q in res["queries"]] == ["failed", "empty", "empty", "hit"]
    runs, _, _ = _matrix(tmp_path, {"cli": r, "blank": r})
    rows = frames.failures(versus.rows_by_system(runs, "search"))
    assert [(x["outcome"], x["kind"], x["count"], x["label"]) for x in rows.to_dict("records")
            if x["system"] == "blank"] == [("empty", "empty", 2, "of 4: 1 failed, 2 empty"),
                                           ("failed", "empty", 1, "of 4: 1 failed, 2 empty")]


def test_an_answer_naming_a_path_outside_the_corpus_is_unresolved_and_the_warning_says_so(
        prepared, indexed, tmp_path):  # noqa: F811
    r = _run(prepared, tmp_path, indexed, "outside")
    res = r["methods"]["search"]
    assert [outcome(q) for q in res["queries"]] == ["hit", "unresolved", "unresolved", "unresolved"]
    assert (res["unresolved"], "empty" in res, res["no_hit"]) == (3, False, 3)
    assert res["queries"][1]["top_candidate"]["path"] == "vendored/pkg_store.py"
    assert _warning(r) == [
        "run ds/fake/a: ⚠ 3 answers resolved no hit (method search: 0 empty, 3 unresolved; paths outside the "
        "corpus, e.g. 'vendored/pkg_store.py' (3 of 3 answers; a corpus path reads like 'pkg/config.py'))"]
    _, m, md = _matrix(tmp_path, {"cli": _run(prepared, tmp_path, indexed), "away": r})
    assert {s.system: s.unresolved for s in m.leaderboard.standings} == {"cli": 0, "away": 3}


def test_the_warning_names_the_tool_s_own_words(prepared, indexed, tmp_path):  # noqa: F811
    r = _run(prepared, tmp_path, indexed, "nothing")
    assert r["methods"]["search"]["queries"][1]["excerpt"] == (
        '{"message": "No results found for \'save value\'", "data": {"symbols": []}}\n')
    assert _warning(r) == ["run ds/fake/a: ⚠ 3 answers resolved no hit (method search: 3 empty, 0 unresolved; the "
                           "tool says it found nothing: \"No results found for 'save value'\")"]


def test_the_warning_names_a_hit_list_a_regex_or_a_field_mapping_matching_nothing(
        prepared, indexed, tmp_path):  # noqa: F811
    listed = _warning(_run(prepared, tmp_path, indexed, "none"))
    assert listed == ["run ds/fake/a: ⚠ 3 answers resolved no hit (method search: 3 empty, 0 unresolved; the "
                      "answers list no hit at `hits` 'data.symbols[]' (the first starts '{\"data\": {\"symbols\": "
                      "[]}}'))"]
    regex = _run(prepared, tmp_path, indexed, parser="regex", pattern=r"^(?P<path>\S+\.rs):(?P<start_line>\d+)",
                 hits="")
    assert [outcome(q) for q in regex["methods"]["search"]["queries"]] == ["empty"] * 4
    assert _warning(regex) == [
        "run ds/fake/a: ⚠ 4 answers resolved no hit (method search: 4 empty, 0 unresolved; `parser: regex` "
        "matched nothing in the answers (the first answer starts '{\"data\": {\"symbols\": [{\"name\": "
        "\"parse_config\", \"file\": \"pkg/config.py\", \"line\": …'); check `pattern`)"]
    # a mapping matching nothing in every answer stops the job (evaluate's early stop); with the
    # first answer empty it runs, and the warning names the mapping
    conf, index = indexed
    conf = system_conf("command", {**INDEXED, "fields": {"symbol": "title", "path": "file"}})
    with pytest.raises(CrmatrixError, match="the first 3 answers name nothing of the corpus"):
        run(prepared, tmp_path, conf, index=index)
    fields = run(prepared, tmp_path, conf, env={"FAKE_MODE": "none-on:parse"}, index=index)
    assert [outcome(q) for q in fields["methods"]["search"]["queries"]] == ["empty"] + ["unresolved"] * 3
    assert _warning(fields) == [
        "run ds/fake/a: ⚠ 4 answers resolved no hit (method search: 1 empty, 3 unresolved; the `fields` mapping "
        "{'symbol': 'title', 'path': 'file'} matches no symbol in the files named (e.g. 'pkg/store.py': symbol "
        "'', line 0))"]


def test_each_answer_keeps_its_first_bytes_bounded(prepared, indexed, tmp_path):  # noqa: F811
    conf, index = indexed
    r = run(prepared, tmp_path, conf, env={"FAKE_NOTE": "a" + "é" * 400}, index=index)
    kept = [q["excerpt"] for q in r["methods"]["search"]["queries"]]
    # 11 bytes of `{"note": "a`, then 144 two-byte characters: the 145th would end past byte 300
    assert kept == ['{"note": "a' + "é" * 144] * 4 and len(kept[0].encode()) == 299 < EXCERPT_BYTES
    assert excerpt("a" * 301) == "a" * EXCERPT_BYTES and excerpt("ab") == "ab"


def test_the_token_table_gives_no_saving_for_empty_answers(prepared, indexed, tmp_path):  # noqa: F811
    r = _run(prepared, tmp_path, indexed, "none")
    queries = r["methods"]["search"]["queries"]
    table = r["methods"]["search"]["token_efficiency"]["all"]
    answered = queries[0]  # the only one with hits
    assert (table["n"], table["excluded"]) == (4, 3)
    assert table["system_tokens"] == answered["response_tokens"] and table["grep_tokens"] == answered["grep_tokens"]
    assert table["saving"] == pytest.approx(1 - answered["response_tokens"] / answered["grep_tokens"])
    assert table["system_hit_rate"] == 0.25  # the empty answers are misses there
    _, _, md = _matrix(tmp_path, {"cli": _run(prepared, tmp_path, indexed), "mute": r})
    section = md[md.index("**ds · mute**"):]
    assert "| all | 4 (3 excluded) | " in section
    assert ("Excluded: 3 of 4 queries failed or answered no hit (`empty`); the tokens and savings are over the "
            "others (an empty answer saves nothing), the hit rates over all.") in section
    assert "excluded" not in md[md.index("**ds · cli**"):md.index("**ds · mute**")]


def test_a_run_of_hits_and_misses_writes_no_new_key(prepared, indexed, tmp_path):  # noqa: F811
    r = _run(prepared, tmp_path, indexed)
    res = r["methods"]["search"]
    assert not {"empty", "unresolved", "no_hit_cause"} & set(res)
    assert not {"outcome"} & set().union(*res["queries"]) and "excluded" not in res["token_efficiency"]["all"]
