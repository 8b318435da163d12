"""Which library code each stage runs, derived from imports: the set that decides what an edit re-runs."""


from conftest import ROOT

from crmatrix.pipeline import codehash

SCRIPTS = ROOT / "workflow" / "scripts"


def modules(stage: str) -> set[str]:
    return {p.relative_to(codehash.ROOT).as_posix() for p in codehash.closure(SCRIPTS / f"{stage}.py")}


BASE = {"__init__.py", "atomic.py", "pipeline/jobs.py", "stages/__init__.py"}


def test_matrix_stage_runs_matrix_stats_and_metrics_only():
    assert modules("collect_matrix") == BASE | {"stages/collect_matrix.py", "analysis/matrix.py", "analysis/stats.py", "evaluation/metrics.py",
                                                "analysis/meta.py", "datasets/ledger.py", "datasets/holdout.py", "datasets/tasks.py"}


def test_plot_stage_runs_the_plots_but_no_statistics():
    got = modules("plot_matrix")
    assert {"plots/catalog.py", "plots/forest.py", "plots/style.py", "plots/gallery.py"} <= got
    assert not got & {"analysis/matrix.py", "analysis/stats.py", "analysis/meta.py"}  # the statistics come in the matrix JSON


def test_fetch_runs_pins_and_corpus_but_no_parser_or_engine():
    assert modules("fetch_corpus") == BASE | {"stages/fetch_corpus.py", "corpora/tree.py", "corpora/pins.py", "corpora/languages.py",
                                              "pipeline/locations.py", "progress.py", "datasets/records.py"}


def test_an_install_runs_pins_and_processes_only_so_no_engine_edit_reinstalls_a_peer():
    assert modules("install_system") == BASE | {"stages/install_system.py", "systems/install.py", "corpora/pins.py", "systems/processes.py",
                                                "evaluation/provenance.py", "corpora/languages.py", "pipeline/locations.py", "progress.py"}


def test_the_release_gate_runs_baseline_check_and_statistics_only():
    assert modules("gate_candidates") == BASE | {"stages/gate_candidates.py", "analysis/baseline.py", "analysis/check.py", "analysis/stats.py",
                                                 "evaluation/metrics.py"}


def test_dataset_stage_runs_no_engine_and_no_system():
    got = modules("prepare_dataset")
    assert {"datasets/__init__.py", "datasets/sweqa.py", "evaluation/trec.py", "symbols/__init__.py", "hits.py"} <= got
    assert not any(m.startswith(("engine/", "embed/")) or m in ("systems/__init__.py", "evaluation/evaluate.py", "analysis/stats.py") for m in got)


def test_engine_edits_reach_index_and_evaluation_but_not_fetch_or_symbols():
    for stage in ("build_index", "evaluate_arm"):
        assert "engine/lexical.py" in modules(stage)  # via engine/__init__, which every engine import runs
    for stage in ("fetch_corpus", "extract_symbols", "prepare_model", "collect_matrix"):
        assert not any(m.startswith("engine/") for m in modules(stage)), stage
    assert {"evaluation/evaluate.py", "systems/__init__.py", "systems/builtin.py", "systems/mcp.py", "systems/guard.py", "evaluation/provenance.py",
            "evaluation/tokens.py", "evaluation/tokenbench.py", "evaluation/metrics.py"} <= modules("evaluate_arm")


def test_query_vectors_run_the_embedding_code_alone_and_the_index_stores_bm25():
    assert modules("embed_queries") == BASE | {"stages/embed_queries.py", "embed/__init__.py", "embed/queries.py",
                                               "embed/backends.py", "embed/cache.py", "embed/models.py",
                                               "datasets/__init__.py", "datasets/tasks.py", "pipeline/__init__.py",
                                               "pipeline/locations.py", "progress.py"}
    assert "engine/bm25.py" in modules("build_index")  # a change to what is stored rebuilds the indexes
    assert "embed/queries.py" in modules("evaluate_arm") and "embed/queries.py" not in modules("build_index")


def test_imports_inside_functions_relative_imports_and_parent_packages_count():
    src = ("from . import atomic\n"
           "def f():\n    from crmatrix.embed.cache import EmbeddingCache\n"
           "import numpy, os.path\nfrom crmatrix.analysis.check import Gate\n")
    assert codehash.imported_modules(src, "crmatrix.stages.x") == {
        "crmatrix", "crmatrix.stages", "crmatrix.embed", "crmatrix.embed.cache", "crmatrix.analysis.check"}
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
    assert sorted(s for s in before if before[s] != after[s]) == ["collect_matrix", "gate_candidates"]
