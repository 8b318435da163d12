"""Which library code each stage runs, derived from imports: the set that decides what an edit re-runs."""


import json

from conftest import ROOT

from crmatrix import codehash

SCRIPTS = ROOT / "workflow" / "scripts"


def modules(stage: str) -> set[str]:
    return {p.relative_to(codehash.ROOT).as_posix() for p in codehash.closure(SCRIPTS / f"{stage}.py")}


# every stage: the job wrapper; a package's __init__ runs with any of its modules (all of
# them but engine's and embed's are a docstring); atomic writes its JSON through indented
BASE = {"__init__.py", "atomic.py", "indented.py", "pipeline/__init__.py", "pipeline/jobs.py", "stages/__init__.py"}
# the pins package: its __init__ imports every pin kind's module (a path's fingerprint reads
# files by the corpus's rules and content keys), and the registry the kinds register in
PINS = {f"corpora/pins/{m}.py" for m in ("__init__", "pin", "git", "gitstore", "pypi", "npm", "path", "downloads",
                                         "archives")} | {"corpora/tree.py", "corpora/blobs.py", "registry.py"}


# the types a run, a cell and the matrix are read as (types only: no statistics in them)
RUN_TYPES = {"jsontypes.py", "integrity.py", "results/__init__.py", "results/run.py"}
MATRIX_TYPES = RUN_TYPES | {"results/cell.py", "results/row.py", "results/pool.py", "results/matrix.py",
                            "results/leaderboard.py"}
STATISTICS = {"analysis/__init__.py", "analysis/cells.py", "analysis/stats.py", "evaluation/__init__.py",
              "evaluation/metrics.py", "datasets/__init__.py", "datasets/ledger.py", "datasets/holdout.py",
              "datasets/tasks.py", *RUN_TYPES, "results/cell.py"}
ASSEMBLY = {"analysis/matrix/__init__.py", "analysis/matrix/assemble.py", "analysis/matrix/rows.py",
            "analysis/matrix/rollups.py", "analysis/matrix/pooling.py", "analysis/matrix/power.py",
            "analysis/matrix/markdown.py", "analysis/matrix/benchmarks.py", "analysis/matrix/panels.py",
            "analysis/meta.py", "labels.py",
            # the leaderboard and the arms ranked: systems compared from the cells' per-query scores
            "analysis/matrix/leaderboard.py", "analysis/ranks.py", "analysis/versus.py", "results/versus.py",
            "hits.py",  # the granularities: the level the leaderboard ranks at
            *MATRIX_TYPES}


def test_matrix_stage_runs_matrix_stats_and_metrics_only():
    assert modules("collect_matrix") == BASE | STATISTICS | ASSEMBLY | {"stages/collect_matrix.py"}


def test_a_cell_runs_its_statistics_but_not_the_matrix_so_no_table_edit_recomputes_a_cell():
    # started by its shell command (common.smk's `light`): the job comes in through shell_job, after
    # its hand-over to a warm server (pipeline/warm); it writes its run's times for the latency charts too
    assert modules("cell_stats") == BASE | STATISTICS | {"stages/cell_stats.py", "pipeline/shell_job.py",
                                                         "pipeline/warm/__init__.py", "pipeline/warm/client.py",
                                                         "pipeline/warm/wire.py", "results/times.py"}


def test_each_chart_stage_runs_its_own_chart_and_no_statistics():
    charts = {"plot_rows": {"arms", "transitions"}, "plot_forest": {"forest"}, "plot_sweep": {"sweep"},
              "plot_heatmap": {"heatmap"}, "plot_latency": {"latency"}}
    modules_of_charts = {f"plots/{kind}.py" for kinds in charts.values() for kind in kinds}
    for stage, kinds in charts.items():
        got = modules(stage)
        own = {f"plots/{kind}.py" for kind in kinds}
        assert own | {f"stages/{stage}.py", "plots/sources.py", "plots/frames.py", "plots/style.py"} <= got
        assert got & modules_of_charts == own, stage  # another chart's edit leaves this one be
        if stage in ("plot_forest", "plot_sweep"):  # handed cells: their rows and pools are the matrix's own code
            assert {"plots/cellview.py", "analysis/matrix/rows.py", "analysis/matrix/pooling.py"} <= got, stage
            # not the matrix's assembly nor its Markdown writer (an edit of the table redraws no forest)
            assert not {"analysis/matrix/assemble.py", "analysis/matrix/markdown.py"} & got, stage
        else:  # the statistics come in the matrix handed in, read as its types
            assert not any(m.startswith("analysis/") for m in got) and "plots/cellview.py" not in got, stage
            assert MATRIX_TYPES <= got, stage
    # the page and the runtime draw nothing: no chart, no frame, no Altair (style)
    assert {"plots/gallery.py", "plots/names.py", "plots/power.py"} <= modules("plot_gallery")
    for stage in ("plot_gallery", "plot_runtime"):
        assert not modules(stage) & (modules_of_charts | {"plots/frames.py", "plots/style.py", "plots/sources.py"})


def test_fetch_runs_pins_and_corpus_but_no_parser_or_engine():
    assert modules("fetch_corpus") == BASE | {
        "stages/fetch_corpus.py", "corpora/__init__.py", "corpora/tree.py", "corpora/languages.py",
        "pipeline/locations.py", "progress.py"} | PINS


def test_a_corpus_written_out_of_a_benchmark_file_runs_the_formats_which_fetching_does_not():
    got = modules("write_corpus")
    assert {"stages/fetch_corpus.py", "datasets/registry.py", "datasets/repoqa.py", "datasets/ds1000.py"} <= got
    assert not any(m.startswith(("engine/", "embed/", "systems/")) for m in got)


def test_an_install_runs_pins_and_processes_only_so_no_engine_edit_reinstalls_a_peer():
    assert modules("install_system") == BASE | {
        "stages/install_system.py", "systems/__init__.py", "systems/install.py", "systems/processes.py",
        "corpora/__init__.py", "corpora/languages.py", "evaluation/__init__.py",
        "evaluation/provenance.py", "pipeline/locations.py", "progress.py",
        # its `install:` entry, typed (on the standard library alone: none of the config's loading)
        "config/__init__.py", "config/entries.py", "frozen.py"} | PINS


def test_the_release_gate_runs_baseline_check_and_statistics_only():
    assert modules("gate_candidates") == BASE | RUN_TYPES | {
        "stages/gate_candidates.py", "analysis/__init__.py", "analysis/baseline.py", "analysis/check.py",
        "analysis/stats.py", "evaluation/__init__.py", "evaluation/metrics.py"}


def test_dataset_stage_runs_no_engine_and_no_system():
    got = modules("prepare_dataset")
    assert {"datasets/__init__.py", "datasets/sweqa.py", "evaluation/trec.py", "symbols/__init__.py", "hits.py"} <= got
    not_run = ("systems/registry.py", "evaluation/evaluate.py", "analysis/stats.py")
    assert not any(m.startswith(("engine/", "embed/")) or m in not_run for m in got)


def test_engine_edits_reach_index_and_evaluation_but_not_fetch_or_symbols():
    for stage in ("build_index", "evaluate_arm"):
        assert "engine/lexical.py" in modules(stage)  # via engine/__init__, which every engine import runs
    for stage in ("fetch_corpus", "extract_symbols", "prepare_model", "cell_stats", "collect_matrix"):
        assert not any(m.startswith("engine/") for m in modules(stage)), stage
    assert {"evaluation/evaluate.py", "systems/registry.py", "systems/builtin.py", "systems/mcp.py", "systems/guard.py",
            "evaluation/provenance.py", "evaluation/tokens.py", "evaluation/tokenbench.py",
            "evaluation/metrics.py"} <= modules("evaluate_arm")


def test_query_vectors_run_the_embedding_code_alone_and_the_index_stores_bm25():
    # every kind of model, as the registry loads them (and the ONNX kind's export)
    kinds = {"registry.py", "embed/transformer.py", "embed/onnxrt.py", "embed/static.py", "embed/export.py"}
    assert modules("embed_queries") == BASE | kinds | {
        "stages/embed_queries.py", "embed/__init__.py", "embed/queries.py", "embed/backends.py", "embed/cache.py",
        "embed/models.py", "datasets/__init__.py", "datasets/tasks.py", "pipeline/__init__.py",
        "pipeline/locations.py", "progress.py"}
    assert "engine/bm25.py" in modules("build_index")  # a change to what is stored rebuilds the indexes
    assert "embed/queries.py" in modules("evaluate_arm") and "embed/queries.py" not in modules("build_index")


def test_imports_inside_functions_relative_imports_and_parent_packages_count():
    src = ("from . import atomic\n"
           "def f():\n    from crmatrix.embed.cache import EmbeddingCache\n"
           "import numpy, os.path\nfrom crmatrix.analysis.check import Gate\n")
    assert codehash.imported_modules(src, "crmatrix.stages.x") == {
        "crmatrix", "crmatrix.stages", "crmatrix.embed", "crmatrix.embed.cache", "crmatrix.analysis",
        "crmatrix.analysis.check"}
    # `from . import atomic` inside the package crmatrix itself
    assert codehash.imported_modules("from . import atomic\n", "crmatrix", is_package=True) == {
        "crmatrix", "crmatrix.atomic"}


def test_hash_changes_with_a_module_in_the_closure_only(tmp_path, monkeypatch):
    """Copy the package, edit one module, and compare each stage's hash with the original's."""
    import shutil

    pkg = tmp_path / "crmatrix"
    shutil.copytree(codehash.ROOT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    before = {s.stem: codehash.stage_hash(s) for s in SCRIPTS.glob("*.py")}
    monkeypatch.setattr(codehash, "ROOT", pkg)
    assert {s.stem: codehash.stage_hash(s) for s in SCRIPTS.glob("*.py")} == before  # the path is not hashed
    (pkg / "analysis/stats.py").write_text((pkg / "analysis/stats.py").read_text() + "\n# an edit\n")
    after = {s.stem: codehash.stage_hash(s) for s in SCRIPTS.glob("*.py")}
    assert sorted(s for s in before if before[s] != after[s]) == [
        "cell_stats", "collect_matrix", "gate_candidates", "plot_costs", "plot_forest", "plot_leaderboard",
        "plot_sweep", "plot_versus"]  # the systems compared run their own paired tests


def test_extraction_rules_are_the_symbols_stage_s_alone():
    """A stage that reads symbols imports their record only: an edit to how symbols are found
    re-runs extract_symbols, and what follows it only when the symbols it writes change."""
    got = {s.stem: modules(s.stem) for s in SCRIPTS.glob("*.py")}
    parse = sorted(s for s, m in got.items() if "symbols/definitions.py" in m)
    # localize_tasks parses the gold files a candidate rule leaves out of a repository's store
    # (their function gold, at each task's commit): the one stage past extraction that parses
    assert parse == ["extract_repository", "extract_symbols", "localize_tasks", "withhold_docs"]
    assert {"symbols/__init__.py", "symbols/record.py"} <= got["build_index"]
    assert "symbols/grammars.py" not in got["build_index"]


def test_a_memo_gives_the_same_hashes_and_parses_only_an_edited_module(tmp_path, monkeypatch):
    import shutil

    pkg = tmp_path / "crmatrix"
    shutil.copytree(codehash.ROOT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    scripts = sorted(SCRIPTS.glob("*.py"))
    plain = {s.stem: codehash.stage_hash(s) for s in scripts}
    memo_file = tmp_path / "memo" / "imports.json"
    memo = codehash.Memo(memo_file)
    assert {s.stem: codehash.stage_hash(s, memo) for s in scripts} == plain
    memo.save()
    # a text per script and per module met (crmatrix/__init__.py at least, which every stage runs)
    assert len(json.loads(memo_file.read_text())) > len(scripts)

    parsed = []
    real = codehash.import_names
    monkeypatch.setattr(codehash, "import_names", lambda source, module=None, is_package=False:
                        parsed.append(module) or real(source, module, is_package))
    again = codehash.Memo(memo_file)
    assert {s.stem: codehash.stage_hash(s, again) for s in scripts} == plain
    assert parsed == []  # every text met before: nothing parsed
    monkeypatch.setattr(codehash, "ROOT", pkg)
    (pkg / "analysis/stats.py").write_text((pkg / "analysis/stats.py").read_text() + "import crmatrix.hits\n")
    edited = codehash.Memo(memo_file)
    after = {s.stem: codehash.stage_hash(s, edited) for s in scripts}
    assert set(parsed) == {"crmatrix.analysis.stats"}  # the edited module alone, once per closure
    assert after == {s.stem: codehash.stage_hash(s) for s in scripts} != plain  # its new import counts
    assert "hits.py" in {p.name for p in codehash.closure(SCRIPTS / "cell_stats.py", edited)}
    # which names are modules is the tree's to say: a module added under an imported name counts
    # though no text that imports it changed (`from crmatrix.analysis import stats` names it), at
    # the next planning (a memo keeps the files it found for its life, one planning)
    (pkg / "analysis/stats").mkdir()
    (pkg / "analysis/stats/__init__.py").write_text("")
    assert "analysis/stats/__init__.py" not in {p.relative_to(pkg).as_posix()
                                                for p in codehash.closure(SCRIPTS / "cell_stats.py", edited)}
    assert "analysis/stats/__init__.py" in {p.relative_to(pkg).as_posix() for p in
                                            codehash.closure(SCRIPTS / "cell_stats.py", codehash.Memo(memo_file))}


def test_a_corrupt_memo_is_parsed_again_not_trusted(tmp_path):
    memo_file = tmp_path / "imports.json"
    memo_file.write_text("{not json")
    script = SCRIPTS / "cell_stats.py"
    assert codehash.stage_hash(script, codehash.Memo(memo_file)) == codehash.stage_hash(script)


def test_a_module_hash_follows_every_import_of_the_module(tmp_path, monkeypatch):
    """The key of the versioned index's bases (`versions.index.base.code_key`) is the hash of
    `crmatrix.versions.index` and all it imports: the identifier rules BM25 tokenizes with
    count (a hand-kept list of the engine, the index and the record had left them out)."""
    import shutil

    files = {p.relative_to(codehash.ROOT).as_posix() for p in codehash._closure(["crmatrix.versions.index"],
                                                                                 codehash.Memo())}
    assert {"versions/index/__init__.py", "versions/index/symbols.py", "versions/grown.py", "symbols/record.py",
            "engine/bm25.py", "identifiers.py"} <= files
    assert not {"pipeline/jobs.py", "stages/__init__.py", "analysis/stats.py"} & files
    copy = tmp_path / "crmatrix"
    shutil.copytree(codehash.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(codehash, "ROOT", copy)
    before = codehash.module_hash("crmatrix.versions.index")
    (copy / "analysis" / "stats.py").write_text((copy / "analysis" / "stats.py").read_text() + "\n# no import\n")
    assert codehash.module_hash("crmatrix.versions.index") == before
    (copy / "identifiers.py").write_text((copy / "identifiers.py").read_text() + "\n# an edit\n")
    assert codehash.module_hash("crmatrix.versions.index") != before
