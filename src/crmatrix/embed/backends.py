"""The kinds of embedding model, one module each, registered by the name a config's
`models.NAME.format` gives: `sentence-transformers` (a model directory on torch,
`crmatrix.embed.transformer`), `onnx` (an ONNX file with a named tokenizer on ONNX Runtime,
`crmatrix.embed.onnxrt`) and `static` (a model2vec token-vector table, `crmatrix.embed.static`);
another package adds one under the entry-point group `crmatrix.model_formats`.

A kind is a class with three class methods: `check(conf, where)` (the config alone, at
validation: one line naming the model's key), `prepare(conf, out, where)` (writes the
prepared model directory `out` with its `model.json`, whose `sha256` covers every file the
embedder reads and keys the embedding cache), and `load(meta, meta_dir, threads)` (the
embedder). Every embedder returns float32, L2-normalized rows in input order. Texts are
batched in a fixed order, sorted by (length, input index): similar lengths pad little
(onnxruntime went from 120 to 272 texts/s here), and the same list always forms the same
batches, so repeated calls give bit-identical vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.embed.models import MODEL_META
from crmatrix.registry import Registry

if TYPE_CHECKING:
    from crmatrix.config.entries import ModelDef


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


def normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def encode_sorted(texts: list[str], dim: int, batch_size: int, encode_batch: Callable[[list[str]], np.ndarray],
                   on_batch: Callable[[int], None] | None = None) -> np.ndarray:
    """Run encode_batch over length-sorted batches and scatter the rows back into input order."""
    out = np.empty((len(texts), dim), dtype=np.float32)
    for idx in _batches(_length_order(texts), batch_size, [len(t) for t in texts]):
        out[idx] = encode_batch([texts[i] for i in idx])
        if on_batch:
            on_batch(len(idx))
    return out


class BatchedEmbedder:
    """An embedder whose `_encode_batch` (rows for one batch of texts) runs on the fixed
    length-sorted batches of at most `batch_size` texts."""

    dim: int
    batch_size: int

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: list[str], on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        return encode_sorted(texts, self.dim, self.batch_size, self._encode_batch, on_batch)


def _builtin_kinds() -> None:
    from crmatrix.embed import onnxrt, static, transformer  # noqa: F401 - they register themselves


KINDS: Registry[type] = Registry("model format", "crmatrix.model_formats", _builtin_kinds)
register = KINDS.register
TAKES_TOKENIZER = "tokenizer"  # the config key of a tokenizer source, for the kinds that take one


def check_model(name: str, model: ModelDef) -> None:
    """The config's `models.NAME` on its own: its format is a known kind and its keys are ones
    that kind reads (one line naming the key otherwise)."""
    where = f"models.{name}"
    KINDS.get(model.format, f"{where}.format").check(model, where)


ONNX_KEYS = {"quantize": "none", "tokenizer": None}  # key -> the value that means unset


class NoOnnxKeys:
    """A kind that reads none of ONNX_KEYS: its check wants each unset (one line otherwise)."""

    @classmethod
    def check(cls, model: ModelDef, where: str) -> None:
        for key, unset in ONNX_KEYS.items():
            if getattr(model, key) != unset:
                raise CrmatrixError(f"{where}.{key}: {getattr(model, key)} needs format: onnx")


def prepare(name: str, model: ModelDef, out: Path) -> dict:
    """Write the prepared model directory `out` for the config's `models.NAME`; its model.json."""
    return KINDS.get(model.format, f"models.{name}.format").prepare(model, Path(out), f"models.{name}")


def write_meta(directory: Path, meta: dict) -> dict:
    atomic.write_json(Path(directory) / MODEL_META, meta)
    return meta


def load_embedder(model_meta: dict, meta_dir: Path | None = None, threads: int | None = None) -> Embedder:
    """Build the embedder a model description names.

    `model_meta` is a prepared model's `model.json` (`prepare`); relative paths in it are
    resolved against `meta_dir`, the directory holding it (None: the current directory).
    Raises CrmatrixError if the built model's dimension differs from the recorded one, since
    cached vectors would then be mixed.
    """
    backend = model_meta.get("backend")
    if not isinstance(backend, str) or backend not in KINDS:
        raise CrmatrixError(f"model backend {backend!r}: expected one of {', '.join(KINDS.names())}")
    embedder = KINDS.get(backend).load(model_meta, Path(meta_dir) if meta_dir is not None else Path(), threads)
    if "dim" in model_meta and embedder.dim != model_meta["dim"]:
        raise CrmatrixError(f"model {model_meta.get('sha256')}: built with dim {embedder.dim}, "
                            f"recorded dim {model_meta['dim']}")
    return embedder
