"""The embedding layer: both backends on the real MiniLM weights, ONNX export, model identity, cache."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from crmatrix import CrmatrixError
from crmatrix.atomic import hash_obj
from crmatrix.embed.backends import load_embedder
from crmatrix.embed.export import export_onnx
from crmatrix.embed.models import DEFAULT_MODEL, model_files_sha256, resolve_model_dir
from crmatrix.embed.transformer import SentenceTransformerEmbedder, describe_st_model

CODE = [
    "def parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())",
    "class Store:\n    def save(self, key, value):\n        self.data[key] = value",
    "fn main() { println!(\"hello\"); }",
    "async function fetchUser(id) { return await db.users.find(id); }",
    "public static void main(String[] args) {}",
    "func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {}",
    "import numpy as np",
    "x = 1",
    "SELECT name FROM users WHERE id = ?",
    "def retry(fn, attempts=3):\n    for _ in range(attempts):\n        try:\n            return fn()\n"
    "        except Exception:\n            pass",
    "interface Props { title: string; onClose(): void }",
    "impl Display for Point { fn fmt(&self, f: &mut Formatter) -> Result { write!(f, \"{}\", self.x) } }",
    "for i in range(10): print(i)",
    "const router = express.Router();",
    "raise ValueError(f'bad key {key!r}')",
    "def tokenize(text: str) -> list[str]:\n    return text.lower().split()",
    "#include <stdio.h>\nint main(void) { return 0; }",
    "self.cache = {}",
    "export default class Parser extends Base { parse(src) { return this.lex(src); } }",
    "with open(path) as f:\n    data = json.load(f)",
]
THREADS = 2


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


@pytest.fixture(scope="session")
def model_dir() -> Path:
    return resolve_model_dir(DEFAULT_MODEL)


@pytest.fixture(scope="session")
def st(model_dir):
    return SentenceTransformerEmbedder(model_dir, threads=THREADS)


@pytest.fixture(scope="session")
def st_code(st) -> np.ndarray:
    return st.encode(CODE)


@pytest.fixture(scope="session")
def exported(model_dir, tmp_path_factory) -> dict:
    """{quantize: (model.json dict, its directory)} for fp32 (None) and int8, exported once."""
    root = tmp_path_factory.mktemp("onnx")
    return {q: (export_onnx(model_dir, root / str(q), q), root / str(q)) for q in (None, "int8")}


# --- sentence-transformers backend ---

def test_st_gives_unit_vectors_in_input_order(st, st_code):
    assert st_code.shape == (len(CODE), 384) and st_code.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(st_code, axis=1), 1.0, atol=1e-5)
    one_by_one = np.concatenate([st.encode([t]) for t in CODE])
    assert cosines(st_code, one_by_one).min() > 0.9999


def test_st_is_bit_identical_on_repeat_and_handles_empty(st, st_code):
    batches = []
    assert np.array_equal(st.encode(CODE, on_batch=batches.append), st_code)  # progress changes nothing
    assert sum(batches) == len(CODE)
    assert st.encode([]).shape == (0, 384)


# --- ONNX export and backend ---

def test_onnx_fp32_matches_st(exported, st_code):
    meta, out = exported[None]
    emb = load_embedder(meta, out, threads=THREADS)
    vecs = emb.encode(CODE)
    assert vecs.shape == (len(CODE), 384) and vecs.dtype == np.float32
    assert cosines(vecs, st_code).min() >= 0.999
    assert np.array_equal(emb.encode(CODE), vecs)
    assert emb.encode([]).shape == (0, 384)


def test_onnx_int8_is_close_and_has_its_own_identity(exported, st_code, model_dir):
    fp32, _ = exported[None]
    meta, out = exported["int8"]
    assert cosines(load_embedder(meta, out, threads=THREADS).encode(CODE), st_code).min() >= 0.98
    assert meta["sha256"] != fp32["sha256"]
    assert meta["source"] == fp32["source"] == model_files_sha256(model_dir)["sha256"]
    assert {k: meta[k] for k in ("backend", "onnx", "tokenizer", "quantize", "opset", "dim")} == {
        "backend": "onnx", "onnx": "model.onnx", "tokenizer": "tokenizer.json", "quantize": "int8",
        "opset": 17, "dim": 384}
    assert json.loads((out / "model.json").read_text()) == meta
    # Only the files in use remain (no fp32 intermediate) beside the source's tokenizer and model
    # settings, which another runtime reads; the hash covers the files the engine loads.
    files = model_files_sha256(out)["files"]
    assert meta["companions"] == ["config.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]
    assert sorted(files) == sorted(["model.json", "model.onnx", "tokenizer.json", *meta["companions"]])
    for name in meta["companions"]:
        assert files[name] == model_files_sha256(model_dir)["files"][name]
    assert hash_obj([(k, files[k]) for k in ("model.onnx", "tokenizer.json")]) == meta["sha256"]


def test_int8_vector_of_a_text_does_not_depend_on_its_neighbours(exported):
    """Dynamic quantization scales over the batch; one text per run keeps a vector the text's own,
    so a cached vector is the same whichever texts were embedded with it."""
    meta, out = exported["int8"]
    emb = load_embedder(meta, out, threads=THREADS)
    together = emb.encode(CODE)
    for i in (0, 9, 19):
        assert np.array_equal(emb.encode([CODE[i]])[0], together[i])


def test_int8_texts_of_the_same_tokens_are_run_once_each_with_its_own_vector(exported, monkeypatch):
    """A text's vector is a function of its tokens, so texts that truncate (or, uncased, lowercase)
    to the same tokens are run once: the versions of a long file that differ past the first 256."""
    meta, out = exported["int8"]
    emb = load_embedder(meta, out, threads=THREADS)
    long = " ".join(CODE) * 4  # well past 256 tokens
    texts = [long + " tail one", CODE[7], long + " another tail", "X = 1", CODE[0], "x  =  1"]
    alone = [emb.encode([t])[0] for t in texts]
    runs, batches, run = [], [], emb.session.run
    monkeypatch.setattr(emb.session, "run", lambda names, feeds: runs.append(1) or run(names, feeds))
    together = emb.encode(texts, on_batch=batches.append)
    assert len(runs) == 3 and sum(batches) == len(texts)  # the long ones, the "x = 1"s, CODE[0]
    assert all(np.array_equal(together[i], alone[i]) for i in range(len(texts)))
    assert np.array_equal(together[0], together[2]) and np.array_equal(together[1], together[3])
    assert not np.array_equal(together[0], together[4])


def test_vectors_are_bit_identical_across_processes(exported, st_code, tmp_path):
    meta, out = exported["int8"]
    script = (
        "import json, sys, numpy as np\n"
        "from pathlib import Path\n"
        "from crmatrix.embed.backends import load_embedder\n"
        "from crmatrix.embed.transformer import describe_st_model\n"
        "texts, meta, out, dest = json.loads(sys.argv[1])\n"
        f"st = load_embedder(describe_st_model({DEFAULT_MODEL!r}), None, threads={THREADS})\n"
        f"onnx = load_embedder(meta, Path(out), threads={THREADS})\n"
        "np.save(dest + '/st.npy', st.encode(texts))\n"
        "np.save(dest + '/int8.npy', onnx.encode(texts))\n"
    )
    arg = json.dumps([CODE, meta, str(out), str(tmp_path)])
    subprocess.run([sys.executable, "-c", script, arg], check=True, capture_output=True, timeout=120)
    assert np.array_equal(np.load(tmp_path / "st.npy"), st_code)
    assert np.array_equal(np.load(tmp_path / "int8.npy"), load_embedder(meta, out, threads=THREADS).encode(CODE))


def test_failed_export_leaves_no_out_dir(model_dir, tmp_path):
    no_weights = tmp_path / "no_weights"
    no_weights.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (no_weights / name).write_bytes((model_dir / name).read_bytes())
    parent = tmp_path / "exports"
    with pytest.raises(CrmatrixError, match="cannot load it for export"):
        export_onnx(no_weights, parent / "out", "int8")
    assert list(parent.iterdir()) == []  # neither out_dir nor its staging sibling


def test_export_rejects_unknown_quantization(model_dir, tmp_path):
    with pytest.raises(CrmatrixError, match="quantize 'int4'"):
        export_onnx(model_dir, tmp_path / "out", "int4")
    assert not (tmp_path / "out").exists()


def test_load_embedder_rejects_unknown_backend():
    with pytest.raises(CrmatrixError, match="backend 'tf'"):
        load_embedder({"backend": "tf"}, None)


# --- model identity ---

def test_model_files_sha256_is_stable_and_tracks_content(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "sub" / "w.bin").write_bytes(b"\x00\x01")
    first = model_files_sha256(tmp_path)
    assert first == model_files_sha256(tmp_path)
    assert sorted(first["files"]) == ["config.json", "sub/w.bin"]

    # Hidden files and bytecode caches are not part of the model.
    (tmp_path / ".gitattributes").write_text("*")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"1")
    assert model_files_sha256(tmp_path) == first

    (tmp_path / "sub" / "w.bin").write_bytes(b"\x00\x02")
    assert model_files_sha256(tmp_path)["sha256"] != first["sha256"]


def test_describe_st_model(model_dir):
    meta = describe_st_model(DEFAULT_MODEL)
    assert meta == {"backend": "sentence-transformers", "source": DEFAULT_MODEL,
                    "sha256": model_files_sha256(model_dir)["sha256"], "dim": 384}


def test_resolve_model_dir(model_dir, tmp_path, monkeypatch):
    assert (model_dir / "config.json").is_file()
    assert resolve_model_dir(str(tmp_path)) == tmp_path
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CrmatrixError) as err:
        resolve_model_dir("someone/some-model")
    assert str(err.value).startswith(
        "model: 'someone/some-model' is no local file or directory and the hub is offline (HF_HUB_OFFLINE=1); ")
