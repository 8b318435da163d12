"""benchmarks/swe_bench.py on a finished clone made here (its Snakemake logs, a job's benchmark
file, a baseline run): its help, what it says of the run it read (cold or not, the wall time from
the logs), and that it writes a file only when asked."""

import os
import subprocess
import sys

import fixture_runs
from conftest import ROOT, git

SCRIPT = ROOT / "benchmarks" / "swe_bench.py"


def swe_bench(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def snakemake_log(clone, name: str, date: str, stamps: list[str], planned: dict[str, int], finished: list[str]):
    """A Snakemake 9 log: its header's date, the job stats it planned, time stamps, the jobs it finished."""
    stats = "".join(f"{rule:<24}{n:>7}\n" for rule, n in planned.items())
    body = "".join(f"[{s}]\nFinished jobid: {i} (Rule: {rule})\n"
                   for i, (s, rule) in enumerate(zip(stamps, finished, strict=True)))
    path = clone / ".snakemake" / "log" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"SNAKEMAKE\n=========\n  Date: {date}\n\nBuilding DAG of jobs...\nJob stats:\n"
                    f"job                       count\n----------------------  -------\n{stats}"
                    f"total{sum(planned.values()):>26}\n\nSelect jobs to execute...\n{body}")


def empty_clone(tmp_path):
    """A git repository of one commit, standing for a clean clone of crmatrix."""
    clone = tmp_path / "clone"
    clone.mkdir()
    git(clone, "init", "-q", "-b", "main")
    (clone / "README").write_text("a clone\n")
    git(clone, "add", "README")
    git(clone, "commit", "-qm", "a clone")
    return clone


def finished_clone(tmp_path):
    clone = empty_clone(tmp_path)
    snakemake_log(clone, "2026-12-04T010000.000000.snakemake.log", "2026-12-04 01:00:00",
                  ["Fri Dec  4 01:00:30 2026", "Fri Dec  4 01:02:00 2026", "Fri Dec  4 01:03:00 2026"],
                  {"fetch_repository": 1, "evaluate_arm": 1, "all": 1}, ["fetch_repository", "evaluate_arm", "all"])
    # `make run`'s report: a command that ran no job, which neither counts nor makes the run warm
    snakemake_log(clone, "2026-12-04T010400.000000.snakemake.log", "2026-12-04 01:04:00", [], {}, [])
    tsv = clone / "logs" / "benchmarks" / "evaluate_arm" / "lite-a" / "builtin" / "baseline.tsv"
    tsv.parent.mkdir(parents=True)
    tsv.write_text("s\th:m:s\tmax_rss\tcpu_time\n12.5\t0:00:12\t100\t10.0\n")
    fixture_runs.write(clone / "results" / "runs" / "lite-a" / "builtin" / "baseline.json",
                       fixture_runs.run("lite-a", "baseline", [1, 2, None, 1], "python"))
    return clone


def tracked_results() -> list[str]:
    return sorted(p.name for p in (ROOT / "benchmarks" / "results").iterdir())


def test_help_says_how_to_call_it():
    proc = swe_bench("--help")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("usage: benchmarks/swe_bench.py [-h] [--note NOTE] [--out OUT | --write]")
    assert "[--run]" in proc.stdout
    assert "--out OUT" in proc.stdout and "--write" in proc.stdout


def test_a_cold_run_is_reported_from_its_logs_and_written_only_to_out(tmp_path):
    clone, before = finished_clone(tmp_path), tracked_results()
    proc = swe_bench(clone)
    assert proc.returncode == 0, proc.stderr
    assert tracked_results() == before  # printed, nothing written
    assert ("cold: the one Snakemake command of the clone that ran jobs, every one it planned "
            "(`2026-12-04T010000.000000.snakemake.log`;") in proc.stdout
    assert "Snakemake wall time of the run: **3.0 min** for 2 jobs" in proc.stdout
    assert "| evaluate_arm | 1 | 12 | 10 | 10.0 |" in proc.stdout
    assert "## Lite: 4 tasks of 1 repositories, baseline arm" in proc.stdout
    # hybrid ranks the gold 1, 2, nowhere, 1; lexical one place worse
    assert "\n| hybrid | 0.500 [0.00, 1.00] | 0.750 [0.25, 1.00] | " in proc.stdout
    assert "\n| lexical | 0.000 [0.00, 0.00] | 0.750 [0.25, 1.00] | " in proc.stdout
    out = tmp_path / "report.md"
    again = swe_bench(clone, "--out", out)
    assert again.returncode == 0 and tracked_results() == before
    assert again.stdout == proc.stdout + f"wrote {out}\n"
    assert out.read_text() == proc.stdout


def test_a_run_in_two_commands_is_not_called_cold_and_its_wall_sums_them(tmp_path):
    clone = finished_clone(tmp_path)
    snakemake_log(clone, "2026-12-04T020000.000000.snakemake.log", "2026-12-04 02:00:00",
                  ["Fri Dec  4 02:00:15 2026", "Fri Dec  4 02:00:30 2026"], {"evaluate_arm": 1, "all": 1},
                  ["evaluate_arm", "all"])
    proc = swe_bench(clone)
    assert proc.returncode == 0, proc.stderr
    assert ("**not cold**: 2 Snakemake commands of the clone ran jobs (`2026-12-04T010000.000000.snakemake.log`: "
            "2 of 2 planned, `2026-12-04T020000.000000.snakemake.log`: 1 of 1 planned)") in proc.stdout
    assert "cold: the one" not in proc.stdout
    assert "Snakemake wall time of the run: **3.5 min** for 3 jobs" in proc.stdout


def test_a_clone_without_a_run_is_one_line_naming_where_it_looked(tmp_path):
    (tmp_path / ".snakemake" / "log").mkdir(parents=True)
    proc = swe_bench(tmp_path)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"{tmp_path}/.snakemake/log: no Snakemake log, so no finished run to read\n"


def test_swerank_lite_has_its_own_section_and_no_share_of_lites(tmp_path):
    clone = finished_clone(tmp_path)
    fixture_runs.write(clone / "results" / "runs" / "swerank-lite-a" / "builtin" / "baseline.json",
                       fixture_runs.run("swerank-lite-a", "baseline", [1, None], "python"))
    proc = swe_bench(clone)
    assert proc.returncode == 0, proc.stderr
    assert "## Lite: 4 tasks of 1 repositories, baseline arm" in proc.stdout  # swerank-lite-a is not Lite's
    section = proc.stdout[proc.stdout.index("## SweRank's protocol (Lite's tasks that edit a function; "
                                            "swerank-bm25 its BM25): 2 tasks of 1 repositories, baseline arm"):]
    assert "\n| hybrid | 0.500 [0.00, 1.00] | 0.500 [0.00, 1.00] | " in section
    assert "\n| swerank-lite-a | 2 | " in section


def test_each_benchmark_names_its_candidate_rule_locagents_acc_and_each_arm_paired(tmp_path):
    clone = finished_clone(tmp_path)
    # the arm lifts hybrid's second task from rank 2 to 1: MRR 0.625 -> 0.750 (lexical 0.333 -> 0.375)
    fixture_runs.write(clone / "results" / "runs" / "lite-a" / "builtin" / "bm25-whole-ids.json",
                       fixture_runs.run("lite-a", "bm25-whole-ids", [1, 1, None, 1], "python"))
    # an arm that ran on another benchmark's datasets only is no row of Lite's
    fixture_runs.write(clone / "results" / "runs" / "verified-a" / "builtin" / "rrf.json",
                       fixture_runs.run("verified-a", "rrf", [1, 1, None, 1], "python"))
    proc = swe_bench(clone)
    assert proc.returncode == 0, proc.stderr
    assert "## Lite: 4 tasks of 1 repositories, baseline arm, candidates `all`\n" in proc.stdout
    assert "\n| method | acc_locagent@1 | acc_locagent@3 | acc_locagent@5 | acc_locagent@10 |\n" in proc.stdout
    # one gold file a task: LocAgent's Acc@k is SweRank's
    assert proc.stdout.count("\n| hybrid | 0.500 [0.00, 1.00] | 0.750 [0.25, 1.00] | 0.750 [0.25, 1.00] | ") == 2
    arms = proc.stdout[proc.stdout.index("Each arm against the baseline"):]
    assert "\n| arm | hybrid | lexical |\n" in arms
    assert "\n| bm25-whole-ids | +0.125 [+0.000, +0.375] | +0.042 [+0.000, +0.125] |\n" in arms
    assert "| rrf |" not in proc.stdout and "## Verified" not in proc.stdout  # no baseline there


def test_lite_over_every_file_is_its_own_section_not_lites(tmp_path):
    clone = finished_clone(tmp_path)
    fixture_runs.write(clone / "results" / "runs" / "lite-all-a" / "builtin" / "baseline.json",
                       fixture_runs.run("lite-all-a", "baseline", [2, None, None], "python"))
    proc = swe_bench(clone)
    assert proc.returncode == 0, proc.stderr
    assert "## Lite: 4 tasks of 1 repositories, baseline arm" in proc.stdout
    section = proc.stdout[proc.stdout.index("## Lite over every .py file, tests too (for comparison): 3 tasks of 1 "
                                            "repositories, baseline arm, candidates `all`\n"):]
    assert "\n| hybrid | 0.000 [0.00, 0.00] | 0.333 [0.00, 1.00] | " in section
