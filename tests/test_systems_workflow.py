"""External systems end to end through Snakemake: a fake CLI (with its own index job) and a
fake MCP server beside the builtin engine, one arm making each crash on a query and hang on
another. Every job finishes; the failures are counted in the runs and shown in the matrix."""

import json
import re

import pytest
import yaml
from conftest import chart_data, chart_spec, snakemake
from test_systems import CORPUS, DATASET, INDEXED, MCP

FAULTY = "crash-on:parse|hang-on:save"


@pytest.mark.slow
def test_a_crashing_and_a_hanging_system_finish_their_jobs_and_show_in_the_matrix(tmp_path):
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    cfg = {
        "corpora": {"fake": {"path": "src"}},
        "datasets": {"ds": {"file": "ds.json", "corpus": "fake"}},
        "systems": {
            "builtin": {"type": "builtin", "methods": ["lexical"]},
            "cli": {"type": "command", "timeout_s": 3, "options": {**INDEXED, "index_env": []}},
            "server": {"type": "mcp", "timeout_s": 3, "options": MCP},
        },
        "arms": {"baseline": {}, "faulty": {"FAKE_MODE": FAULTY}},
        "headline_method": "lexical",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = snakemake(tmp_path, "--cores", "2", "all", "--configfile", str(tmp_path / "config.yaml"))
    # one index job for the CLI (the arms agree on its index variables: none), none for the server
    assert len(re.findall(r"^(?:local)?rule build_system_index:", proc.stderr, flags=re.M)) == 1

    def run(system, arm):
        return json.loads((tmp_path / f"results/runs/ds/{system}/{arm}.json").read_text())

    for system in ("cli", "server"):
        ok, faulty = run(system, "baseline"), run(system, "faulty")
        method = next(iter(faulty["methods"]))
        assert ok["methods"][method]["errors"] == 0
        assert faulty["methods"][method]["errors"] == 2
        assert faulty["methods"][method]["failures"] == {"bad-output": 0, "budget": 0, "crash": 1, "empty": 0,
                                                         "timeout": 1}, system
        assert [q["failure"] for q in faulty["methods"][method]["queries"]] == ["crash", "timeout", None, None]
    md = (tmp_path / "results/matrix/phase-matrix.md").read_text()
    for system in ("cli", "server"):
        row = next(line for line in md.splitlines() if line.startswith(f"| ds | {system} |"))
        assert row.rstrip().endswith("⚠ 2 failed (1 crash, 1 timeout) |"), row
    # the systems compared, from the baseline arm's runs: all three on the leaderboard, each
    # peer's forest against the builtin (the default reference), all in the gallery
    board = chart_spec(tmp_path / "results/plots/leaderboard.html")
    assert sorted(s.split(" ")[0] for s in board["facet"]["column"]["sort"]) == ["builtin", "cli", "server"]
    assert {(r["system"].split(" ")[0], r["dataset"]) for r in chart_data(board)} == {
        ("builtin", "ds"), ("cli", "ds"), ("server", "ds")}
    for system in ("cli", "server"):
        assert (tmp_path / f"results/plots/versus/{system}.svg").stat().st_size > 0
    assert not (tmp_path / "results/plots/versus/builtin.svg").exists()
    gallery = (tmp_path / "results/plots/index.html").read_text()
    assert all(f'id="{stem}"' in gallery for stem in ("leaderboard", "costs", "failures", "versus/cli"))
