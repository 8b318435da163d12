"""Two interchangeable embedders: sentence-transformers on torch, and an exported ONNX model.

Both return float32, L2-normalized rows in input order. Texts are batched in a fixed
order, sorted by (length, input index): similar lengths pad little (onnxruntime went from
120 to 272 texts/s here), and the same list always forms the same batches, so repeated
calls give bit-identical vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from crmatrix import CrmatrixError
from crmatrix.embed.models import model_files_sha256, resolve_model_dir


class Embedder(Protocol):
    dim: int

    def encode(self, texts: list[str], on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """Rows in input order; `on_batch(n)` after each batch of n texts (for progress)."""


def _length_order(texts: list[str]) -> list[int]:
    """Indices sorted by (length, index): the tie-break keeps the batching deterministic."""
    return sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))


# Characters per batch (about 4 per token): attention memory grows with batch x length^2, so
# batches of long texts (signatures with docs and hints) are cut short to bound peak RSS.
BATCH_CHARS = 16_384


def _batches(order: list[int], size: int, lengths: list[int]) -> Iterator[list[int]]:
    """Consecutive runs of the length-sorted order, at most `size` texts and about BATCH_CHARS
    characters of padded length each; the same list always gives the same batches."""
    batch: list[int] = []
    for i in order:
        # sorted by length, so the newest text is the longest: the batch pads to it
        if batch and (len(batch) == size or (len(batch) + 1) * lengths[i] > BATCH_CHARS):
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def _normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def _encode_sorted(texts: list[str], dim: int, batch_size: int, encode_batch: Callable[[list[str]], np.ndarray],
                   on_batch: Callable[[int], None] | None = None) -> np.ndarray:
    """Run encode_batch over length-sorted batches and scatter the rows back into input order."""
    out = np.empty((len(texts), dim), dtype=np.float32)
    for idx in _batches(_length_order(texts), batch_size, [len(t) for t in texts]):
        out[idx] = encode_batch([texts[i] for i in idx])
        if on_batch:
            on_batch(len(idx))
    return out


class SentenceTransformerEmbedder:
    """all-MiniLM-style models through sentence-transformers on CPU.

    `threads` sets torch's intra-op pool, which is process-wide.
    """

    def __init__(self, model_dir: Path, batch_size: int = 64, threads: int | None = None):
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        # local_files_only: a model directory must be complete; never fill gaps from the hub.
        self.model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        self.dim = int(self.model.get_embedding_dimension())
        self.batch_size = batch_size

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        # One call per batch so our (length, index) order, not the library's, fixes the batches.
        return self.model.encode(texts, batch_size=len(texts), convert_to_numpy=True,
                                 normalize_embeddings=True, show_progress_bar=False)

    def encode(self, texts: list[str], on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        return _encode_sorted(texts, self.dim, self.batch_size, self._encode_batch, on_batch)


class OnnxEmbedder:
    """A transformer exported by `export.export_onnx`, mean-pooled and normalized in numpy.

    One text per run by default: a dynamically quantized (INT8) model scales activations
    over the whole batch tensor, so in a batch a text's vector depends on its neighbours
    (cosine 0.98-0.99 to itself alone, measured here) and a cached vector would depend on
    which texts happened to be missing. Alone, it depends on the text only — and with no
    padding, onnxruntime was faster here too (395 vs 321 texts/s on requests' symbols).
    """

    def __init__(self, onnx_path: Path, tokenizer_json: Path, batch_size: int = 1,
                 threads: int | None = None, max_length: int = 256):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        # The file pads and truncates to a fixed 128; pad to the batch's longest text instead.
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.enable_padding()
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.dim = int(self.session.get_outputs()[0].shape[-1])
        self.batch_size = batch_size

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        feeds = {k: v for k, v in feeds.items() if k in self.input_names}
        hidden = self.session.run(None, feeds)[0]
        mask = feeds["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return _normalize(pooled)

    def encode(self, texts: list[str], on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        return _encode_sorted(texts, self.dim, self.batch_size, self._encode_batch, on_batch)


def _verified_source(model_meta: dict) -> Path:
    """The directory the model's source names on this machine, if its files still hash as prepared."""
    model_dir = resolve_model_dir(model_meta["source"])
    got = model_files_sha256(model_dir)["sha256"]
    if got != model_meta["sha256"]:
        raise CrmatrixError(f"model {model_meta['source']!r}: the files at {model_dir} hash {got[:12]}, but it was "
                            f"prepared as {model_meta['sha256'][:12]}; rerun with --forcerun prepare_model")
    return model_dir


def load_embedder(model_meta: dict, meta_dir: Path | None = None, threads: int | None = None) -> Embedder:
    """Build the embedder a model description names.

    `model_meta` is `export.describe_st_model(...)` or an exported `model.json`; relative
    paths in it are resolved against `meta_dir`, the directory holding that model.json
    (None: the current directory). Raises CrmatrixError if the built model's dimension
    differs from the recorded one, since cached vectors would then be mixed.
    """
    base = Path(meta_dir) if meta_dir is not None else Path()
    backend = model_meta.get("backend")
    if backend == "sentence-transformers":
        embedder = SentenceTransformerEmbedder(_verified_source(model_meta), threads=threads)
    elif backend == "onnx":
        embedder = OnnxEmbedder(base / model_meta["onnx"], base / model_meta["tokenizer"], threads=threads)
    else:
        raise CrmatrixError(f"model backend {backend!r}: expected 'sentence-transformers' or 'onnx'")
    if "dim" in model_meta and embedder.dim != model_meta["dim"]:
        raise CrmatrixError(f"model {model_meta.get('sha256')}: built with dim {embedder.dim}, "
                            f"recorded dim {model_meta['dim']}")
    return embedder
