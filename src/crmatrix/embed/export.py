"""Describe a sentence-transformers model, or export it to ONNX (optionally INT8) for onnxruntime.

Export recipe measured in /work/shared/RECIPES.md: the TorchScript exporter at opset 17
(the dynamo exporter's model ran ~20 % slower), and dynamic per-channel INT8 weights
(per-tensor lost too much: cosine vs torch down to 0.934).
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.atomic import staged_dir, write_json
from crmatrix.embed.models import model_files_sha256, resolve_model_dir

OPSET = 17
QUANTIZE_CHOICES = (None, "int8")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_DIM_CONFIGS = (("1_Pooling/config.json", "word_embedding_dimension"), ("config.json", "hidden_size"))
# The tokenizer's and model's settings beside tokenizer.json, copied from the source into an
# export so that it is a whole ONNX model directory another runtime loads as it is (fastembed
# needs tokenizer_config.json; a system names the export as {model:NAME}). The engine reads
# none of them: they are not in the export's sha256 (`source`, the source's files, covers them),
# so an embedding cached under that hash stays valid.
COMPANIONS = ("config.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def _model_dim(model_dir: Path) -> int:
    """The embedding size from the config files; reading JSON keeps torch out of the process."""
    for rel, key in _DIM_CONFIGS:
        path = model_dir / rel
        if path.is_file():
            value = json.loads(path.read_text(encoding="utf-8")).get(key)
            if isinstance(value, int):
                return value
    raise CrmatrixError(f"model {model_dir}: no {' or '.join(f'{r}:{k}' for r, k in _DIM_CONFIGS)}")


def describe_st_model(source: str) -> dict:
    """The model description for the sentence-transformers backend (what `load_embedder` reads):
    its source name and the hash of its files."""
    # Not the directory: it lies inside this machine's venv or hub cache, and a moved checkout
    # or a new venv must keep the model (and every index built with it) valid.
    model_dir = resolve_model_dir(source)
    return {"backend": "sentence-transformers", "source": source,
            "sha256": model_files_sha256(model_dir)["sha256"], "dim": _model_dim(model_dir)}


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


def export_onnx(model_dir: Path, out_dir: Path, quantize: str | None) -> dict:
    """Export model_dir to out_dir/{model.onnx, tokenizer.json, model.json} and the source's
    COMPANIONS that it has; return model.json.

    Built in a temporary sibling and renamed into place, so a failure leaves no out_dir.
    model.json's sha256 covers the files the engine loads (model.onnx, tokenizer.json); its
    `source` every file of the source, the companions too.
    """
    if quantize not in QUANTIZE_CHOICES:
        raise CrmatrixError(f"quantize {quantize!r}: expected one of {QUANTIZE_CHOICES}")
    model_dir = Path(model_dir)
    source_sha = model_files_sha256(model_dir)["sha256"]
    with staged_dir(Path(out_dir)) as tmp:
        final = tmp / "model.onnx"
        if quantize == "int8":
            fp32 = tmp / "model.fp32.onnx"
            _export_fp32(model_dir, fp32)
            _quantize_int8(fp32, final)
            fp32.unlink()  # only the model that is used belongs to (and is hashed into) out_dir
        else:
            _export_fp32(model_dir, final)
        shutil.copyfile(model_dir / "tokenizer.json", tmp / "tokenizer.json")
        meta = {"backend": "onnx", "onnx": final.name, "tokenizer": "tokenizer.json", "source": source_sha,
                "quantize": quantize, "opset": OPSET, "sha256": model_files_sha256(tmp)["sha256"],
                "dim": _model_dim(model_dir)}
        meta["companions"] = [name for name in COMPANIONS if (model_dir / name).is_file()]
        for name in meta["companions"]:
            shutil.copyfile(model_dir / name, tmp / name)
        write_json(tmp / "model.json", meta)
    return meta
