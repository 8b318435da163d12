"""Indexes prove their bytes: checksums recorded at the build, verified at every load; then
through Snakemake, a builtin index and an external tool's index altered after their build."""

import json
import os
import re
import shutil

import pytest
import yaml
from conftest import snakemake
from test_systems import CORPUS, DATASET, INDEXED

from crmatrix import CrmatrixError, integrity

HINT = "delete the index directory and run again"


@pytest.fixture
def built(tmp_path):
    root = tmp_path / "index"
    (root / "sub").mkdir(parents=True)
    (root / "vectors.bin").write_bytes(bytes(range(256)) * 4)
    (root / "sub" / "meta.json").write_text('{"n": 1}\n')
    os.symlink("sub/meta.json", root / "link")
    sums = integrity.record(root)
    assert sorted(sums["files"]) == ["link", "sub/meta.json", "vectors.bin"]
    assert sums["files"]["vectors.bin"]["bytes"] == 1024 and sums["files"]["link"] == {"link": "sub/meta.json"}
    integrity.verify(root)
    return root


def refused(root, rel) -> str:
    with pytest.raises(CrmatrixError) as e:
        integrity.verify(root)
    assert str(e.value).startswith(f"{root / rel}: ") and str(e.value).endswith(f"; {HINT}")
    return str(e.value)


def test_a_file_altered_resized_or_missing_is_named_and_an_added_one_is_no_part_of_the_index(built):
    (built / "lock").write_text("a tool's lock file, made after the build\n")
    integrity.verify(built)
    data = bytearray((built / "vectors.bin").read_bytes())
    data[100:500] = bytes(b ^ 0xFF for b in data[100:500])  # 400 bytes flipped: same size, other bytes
    (built / "vectors.bin").write_bytes(bytes(data))
    assert re.fullmatch(r".*: its bytes differ from those recorded when the index was built \(sha256 [0-9a-f]{12}, "
                        r"recorded [0-9a-f]{12}\); .*", refused(built, "vectors.bin"))
    (built / "vectors.bin").write_bytes(bytes(data[:1000]))
    assert ": 1000 bytes, but 1024 bytes when the index was built; " in refused(built, "vectors.bin")
    (built / "vectors.bin").unlink()
    assert ": missing (recorded when the index was built); " in refused(built, "vectors.bin")


def test_a_link_retargeted_and_an_index_without_checksums_are_refused(built):
    (built / "link").unlink()
    os.symlink("vectors.bin", built / "link")
    assert ": not the link to sub/meta.json recorded when the index was built; " in refused(built, "link")
    (built / integrity.CHECKSUMS).unlink()
    with pytest.raises(CrmatrixError) as e:
        integrity.verify(built)
    assert str(e.value) == (f"{built}: no crmatrix-checksums.json (built by an older crmatrix, or cut short), so its "
                            f"files cannot be checked; {HINT}")


@pytest.mark.slow
def test_through_snakemake_an_altered_index_stops_its_evaluation_naming_the_file(tmp_path):
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    cfg = {
        "corpora": {"fake": {"path": "src"}},
        "datasets": {"ds": {"file": "ds.json", "corpus": "fake"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["semantic"]},
                    "cli": {"type": "command", "options": {**INDEXED, "index_env": []}}},
        "arms": {"baseline": {}},
        "headline_method": "semantic",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))

    def run(*args, check=True):
        return snakemake(tmp_path, "--cores", "2", "all", "--configfile", str(tmp_path / "config.yaml"), *args,
                         check=check)

    def mrr(system, method):
        path = tmp_path / f"results/runs/ds/{system}/baseline.json"
        return json.loads(path.read_text())["methods"][method]["metrics"]["mrr"]

    run()
    before = {"builtin": mrr("builtin", "semantic"), "cli": mrr("cli", "search")}
    assert before["cli"] == 1.0
    (vectors,) = (tmp_path / "results/index/fake/builtin").glob("*/vectors.npy")
    (tool_index,) = (tmp_path / "results/index/fake/cli").glob("*/fake-index.json")
    data = bytearray(vectors.read_bytes())
    data[200:600] = bytes(b ^ 0x55 for b in data[200:600])  # 400 bytes of floats: still a valid array
    vectors.write_bytes(bytes(data))
    # a symbol renamed in the tool's index, the length kept: still valid JSON of the same size
    tool_index.write_text(tool_index.read_text().replace('"save_value"', '"save_vXlue"'))

    # Snakemake sees nothing (the directories' times are the build's), but every load checks the bytes
    proc = run("--forcerun", "evaluate_arm", "--keep-going", check=False)
    assert proc.returncode != 0
    for path in (vectors, tool_index):
        rel = path.relative_to(tmp_path)
        assert re.search(rf"^crmatrix: {re.escape(str(rel))}: its bytes differ from those recorded when the index "
                         rf"was built \(sha256 [0-9a-f]{{12}}, recorded [0-9a-f]{{12}}\); {HINT}$",
                         proc.stderr, flags=re.M), proc.stderr
    assert not (tmp_path / "results/runs/ds/builtin/baseline.json").exists()

    # as the message says: the index directories deleted, the next run rebuilds them and scores as before
    shutil.rmtree(vectors.parent)
    shutil.rmtree(tool_index.parent)
    run()
    assert {"builtin": mrr("builtin", "semantic"), "cli": mrr("cli", "search")} == before
