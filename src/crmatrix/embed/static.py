"""`static`: a static embedding model in model2vec's format — a token-vector table, no network.

A text's vector is the mean of its tokens' rows (each scaled by its weight when the table is
vocabulary-quantized: `mapping` sends a token to a shared row, `weights` scales it), then
L2-normalized. The files are model2vec's: `config.json`, `model.safetensors` (`embeddings`,
and `mapping` and `weights` for a quantized vocabulary) and `tokenizer.json`; model2vec's own
model embeds with them (built as `StaticModel.from_pretrained` builds it, in less time:
`static_model`; nothing touches a hub). They
are checked against each other here first, since a table whose rows disagree with its
tokenizer would embed silently wrong, and copied into the prepared directory.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.embed.backends import BatchedEmbedder, NoOnnxKeys, normalize, register, write_meta
from crmatrix.embed.models import model_files_sha256, resolve_model_dir

FORMAT = "static"
FILES = ("config.json", "model.safetensors", "tokenizer.json")
TABLE = "embeddings"


def check_files(model_dir: Path, where: str) -> int:
    """The table's width, after checking the files against each other: one line naming the
    model otherwise (a file missing, a table whose rows disagree with the tokenizer)."""
    from safetensors import safe_open
    from tokenizers import Tokenizer

    missing = [f for f in FILES if not (model_dir / f).is_file()]
    if missing:
        raise CrmatrixError(f"{where}.source: {model_dir} has no {', '.join(missing)} (a model2vec model is "
                            f"{', '.join(FILES)})")
    try:
        vocab = Tokenizer.from_file(str(model_dir / "tokenizer.json")).get_vocab_size()
        with safe_open(str(model_dir / "model.safetensors"), framework="numpy") as f:
            tensors = {k: f.get_slice(k).get_shape() for k in f.keys()}
            mapping = f.get_tensor("mapping") if "mapping" in tensors else None
    except Exception as e:  # the tokenizers and safetensors libraries' own errors: a file they cannot read
        raise CrmatrixError(f"{where}.source: {model_dir}: unreadable model files: {str(e).splitlines()[0]}") from None
    shape = tensors.get(TABLE)
    if shape is None or len(shape) != 2:
        raise CrmatrixError(f"{where}.source: model.safetensors holds no 2-d {TABLE!r} table "
                            f"(tensors: {', '.join(f'{k} {v}' for k, v in sorted(tensors.items()))})")
    rows, dim = shape
    if mapping is None and rows != vocab:
        raise CrmatrixError(f"{where}.source: the table has {rows} rows but the tokenizer {vocab} tokens: a static "
                            "model's table and tokenizer disagree")
    if mapping is not None and (mapping.shape != (vocab,) or int(mapping.min()) < 0 or int(mapping.max()) >= rows):
        raise CrmatrixError(f"{where}.source: 'mapping' {list(mapping.shape)} must send each of the tokenizer's "
                            f"{vocab} tokens to one of the table's {rows} rows")
    if "weights" in tensors and tensors["weights"] != [vocab]:
        raise CrmatrixError(f"{where}.source: 'weights' {tensors['weights']}, expected one per token ({vocab})")
    return int(dim)


def static_model(model_dir: Path):
    """model2vec's `StaticModel.from_pretrained(model_dir)` of a prepared directory, attribute for
    attribute (tests/test_models.py), in a third of its time. `from_pretrained` reads the
    tokenizer, then copies it (`copy.deepcopy`: its whole state out to JSON and back) and writes
    it out to JSON once more for its unknown token: 2 of the 3 s tokenlearn's load took, paid by
    every job that embeds with it. Here the tokenizer file is read once, for the tokenizer and
    the unknown token both; the rest is `StaticModel.__init__`'s, with the tokenizer it owns."""
    from model2vec import StaticModel
    from model2vec.model import _DEFAULT_NORMALIZE, DEFAULT_MAX_LENGTH, _disable_padding
    from safetensors import safe_open
    from tokenizers import Tokenizer

    text = (model_dir / "tokenizer.json").read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_str(text)
    with safe_open(str(model_dir / "model.safetensors"), framework="numpy") as f:
        names = set(f.keys())
        vectors = f.get_tensor(TABLE)
        weights, mapping = (f.get_tensor(k) if k in names else None for k in ("weights", "mapping"))
    config = atomic.read_json(model_dir / "config.json")
    model = StaticModel.__new__(StaticModel)
    model.tokens = tuple(t for t, _ in sorted(tokenizer.get_vocab().items(), key=lambda x: x[1]))
    model.embedding, model.weights, model.token_mapping = vectors, weights, mapping
    _disable_padding(tokenizer)
    model.tokenizer = tokenizer
    unk = getattr(tokenizer.model, "unk_token", False)  # as model2vec's _get_unk_token_id finds it
    model.unk_token_id = (json.loads(text)["model"].get("unk_id") if unk is False
                          else None if unk is None else tokenizer.token_to_id(unk))
    model.median_token_length = int(np.median([len(t) for t in model.tokens]))
    model.config = {**config}
    model.base_model_name = model.language = None  # from a README.md, which a prepared directory has not
    model.max_length = config.get("max_length", DEFAULT_MAX_LENGTH)
    model.normalize = config.get("normalize", _DEFAULT_NORMALIZE)
    return model


class StaticEmbedder(BatchedEmbedder):
    """model2vec's StaticModel over the prepared files; one vector per text, whatever its batch."""

    def __init__(self, model_dir: Path, batch_size: int = 1024):
        self.model = static_model(Path(model_dir))  # its config's normalize; encode skips it
        self.dim = int(self.model.dim)
        self.batch_size = batch_size

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        # no worker threads: their order must not matter, and one process is what a job has
        vectors = self.model.encode(texts, batch_size=len(texts), show_progress_bar=False, normalize=False,
                                    use_multiprocessing=False)
        return normalize(np.asarray(vectors, dtype=np.float32))


@register(FORMAT)
class StaticKind(NoOnnxKeys):
    @classmethod
    def prepare(cls, model, out: Path, where: str) -> dict:
        source = resolve_model_dir(model.source, f"{where}.source")
        dim = check_files(source, where)
        with atomic.staged_dir(Path(out)) as d:
            for name in FILES:
                shutil.copyfile(source / name, d / name)
            meta = {"backend": FORMAT, "source": model_files_sha256(source)["sha256"],
                    "sha256": model_files_sha256(d)["sha256"], "dim": dim}
            write_meta(d, meta)
        return meta

    @classmethod
    def load(cls, meta: dict, meta_dir: Path, threads: int | None) -> StaticEmbedder:
        return StaticEmbedder(meta_dir)
