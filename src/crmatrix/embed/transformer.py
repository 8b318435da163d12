"""`sentence-transformers`: a sentence-transformers model directory, embedded on torch.

The prepared model is its description alone (`model.json`: the source's name and the hash of
its files), not a copy: the source lies inside this machine's venv or hub cache, and a moved
checkout or a new venv must keep the model (and every index built with it) valid; the loader
checks that the files still hash as prepared.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.embed.backends import BatchedEmbedder, NoOnnxKeys, register, write_meta
from crmatrix.embed.models import model_files_sha256, resolve_model_dir

FORMAT = "sentence-transformers"
_DIM_CONFIGS = (("1_Pooling/config.json", "word_embedding_dimension"), ("config.json", "hidden_size"))


def model_dim(model_dir: Path, where: str = "model") -> int:
    """The embedding size from the config files; reading JSON keeps torch out of the process."""
    for rel, key in _DIM_CONFIGS:
        path = Path(model_dir) / rel
        if path.is_file():
            value = json.loads(path.read_text(encoding="utf-8")).get(key)
            if isinstance(value, int):
                return value
    raise CrmatrixError(f"{where}: {model_dir} has no {' or '.join(f'{r}:{k}' for r, k in _DIM_CONFIGS)} "
                        "(not a sentence-transformers model directory)")


def describe_st_model(source: str, where: str = "model") -> dict:
    """The model description `load` reads: its source name and the hash of its files."""
    model_dir = resolve_model_dir(source, f"{where}.source")
    return {"backend": FORMAT, "source": source, "sha256": model_files_sha256(model_dir)["sha256"],
            "dim": model_dim(model_dir, where)}


class SentenceTransformerEmbedder(BatchedEmbedder):
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


@register(FORMAT)
class SentenceTransformersKind(NoOnnxKeys):
    @classmethod
    def prepare(cls, model, out: Path, where: str) -> dict:
        meta = describe_st_model(model.source, where)
        with atomic.staged_dir(Path(out)) as d:
            write_meta(d, meta)
        return meta

    @classmethod
    def load(cls, meta: dict, meta_dir: Path, threads: int | None) -> SentenceTransformerEmbedder:
        """Built from the source, if its files still hash as prepared."""
        model_dir = resolve_model_dir(meta["source"])
        got = model_files_sha256(model_dir)["sha256"]
        if got != meta["sha256"]:
            raise CrmatrixError(f"model {meta['source']!r}: the files at {model_dir} hash {got[:12]}, but it was "
                                f"prepared as {meta['sha256'][:12]}; rerun with --forcerun prepare_model")
        return SentenceTransformerEmbedder(model_dir, threads=threads)
