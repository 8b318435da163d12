"""A prepared ONNX model directory (model.onnx, tokenizer.json, model.json) for onnxruntime:
a sentence-transformers model exported to ONNX, or a given .onnx file with a named tokenizer;
either optionally quantized to INT8.

Export recipe measured in /work/shared/RECIPES.md: the TorchScript exporter at opset 17
(the dynamo exporter's model ran ~20 % slower), and dynamic per-channel INT8 weights
(per-tensor lost too much: cosine vs torch down to 0.934).
"""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.atomic import hash_obj, sha256_file, staged_dir, write_json
from crmatrix.embed.models import model_files_sha256
from crmatrix.embed.transformer import model_dim

OPSET = 17
QUANTIZE_CHOICES = (None, "int8")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# The tokenizer's and model's settings beside tokenizer.json, copied from the source into an
# export so that it is a whole ONNX model directory another runtime loads as it is (fastembed
# needs tokenizer_config.json; a system names the export as {model:NAME}). The engine reads
# none of them: they are not in the export's sha256 (`source`, the source's files, covers them),
# so an embedding cached under that hash stays valid.
COMPANIONS = ("config.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
# A given ONNX file's companions come from its tokenizer's directory: that model's config.json
# describes another network, so only the tokenizer's settings are copied.
TOKENIZER_COMPANIONS = COMPANIONS[1:]


def _export_fp32(model_dir: Path, dest: Path) -> None:
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    class LastHidden(torch.nn.Module):
        """Fixes the positional signature and the single output the ONNX graph gets."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    try:
        model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    except OSError as err:  # missing or unreadable weights/config
        raise CrmatrixError(f"model {model_dir}: cannot load it for export: {err}") from err
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_padding()
    # Two texts of different lengths, so the traced graph sees a real padding mask.
    sample = tokenizer.encode_batch(["def parse_config(text): return text", "class Store"])
    args = tuple(torch.tensor([getattr(e, a) for e in sample], dtype=torch.long)
                 for a in ("ids", "attention_mask", "type_ids"))
    axes = {name: {0: "batch", 1: "seq"} for name in (*_INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        # The legacy exporter is chosen on purpose (see module docstring). The tracer's
        # "treated as a constant" notes concern the padding branch, which the padded sample fixes.
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        torch.onnx.export(LastHidden(model), args, str(dest), input_names=list(_INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=OPSET, dynamo=False)


def _quantize_int8(src: Path, dest: Path) -> None:
    # No quant_pre_process: its symbolic shape inference fails on this graph.
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(src), str(dest), weight_type=QuantType.QInt8, per_channel=True)


def _check_quantize(quantize: str | None) -> None:
    if quantize not in QUANTIZE_CHOICES:
        raise CrmatrixError(f"quantize {quantize!r}: expected one of {QUANTIZE_CHOICES}")


def _write_onnx_dir(out_dir: Path, quantize: str | None, write_fp32: Callable[[Path], None], tokenizer_json: Path,
                    companions_from: Path, meta: dict, companions: tuple[str, ...] = COMPANIONS) -> dict:
    """out_dir/{model.onnx, tokenizer.json, model.json} and the `companions` that `companions_from`
    has; `write_fp32(path)` writes the unquantized graph. Built in a temporary sibling and
    renamed into place, so a failure leaves no out_dir. model.json's sha256 covers the files
    the engine loads (model.onnx, tokenizer.json); `meta` adds what the source was."""
    with staged_dir(Path(out_dir)) as tmp:
        final = tmp / "model.onnx"
        if quantize == "int8":
            fp32 = tmp / "model.fp32.onnx"
            write_fp32(fp32)
            _quantize_int8(fp32, final)
            fp32.unlink()  # only the model that is used belongs to (and is hashed into) out_dir
        else:
            write_fp32(final)
        shutil.copyfile(tokenizer_json, tmp / "tokenizer.json")
        meta = {"backend": "onnx", "onnx": final.name, "tokenizer": "tokenizer.json", **meta, "quantize": quantize,
                "sha256": model_files_sha256(tmp)["sha256"]}
        meta["companions"] = [name for name in companions if (companions_from / name).is_file()]
        for name in meta["companions"]:
            shutil.copyfile(companions_from / name, tmp / name)
        write_json(tmp / "model.json", meta)
    return meta


def export_onnx(model_dir: Path, out_dir: Path, quantize: str | None) -> dict:
    """Export the sentence-transformers model_dir to out_dir (`_write_onnx_dir`); return model.json.
    Its `source` is the hash of every file of the source, the companions too."""
    _check_quantize(quantize)
    model_dir = Path(model_dir)
    source_sha = model_files_sha256(model_dir)["sha256"]
    return _write_onnx_dir(out_dir, quantize, lambda dest: _export_fp32(model_dir, dest), model_dir / "tokenizer.json",
                           model_dir, {"source": source_sha, "opset": OPSET, "dim": model_dim(model_dir),
                                       "output": "last_hidden_state", "pooling": "mean"})


def package_onnx(onnx_file: Path, tokenizer_json: Path, out_dir: Path, quantize: str | None, output: dict) -> dict:
    """A given ONNX file with the tokenizer it was trained with, as out_dir (`_write_onnx_dir`;
    the tokenizer's directory gives the companions); return model.json. `output` names the
    graph's output and its pooling (`{"output", "pooling", "dim"}`); `source` hashes both files."""
    _check_quantize(quantize)
    onnx_file, tokenizer_json = Path(onnx_file), Path(tokenizer_json)
    source_sha = hash_obj([sha256_file(onnx_file), sha256_file(tokenizer_json)])
    return _write_onnx_dir(out_dir, quantize, lambda dest: shutil.copyfile(onnx_file, dest), tokenizer_json,
                           tokenizer_json.parent, {"source": source_sha, **output}, TOKENIZER_COMPANIONS)
