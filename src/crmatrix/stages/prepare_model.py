"""prepare_model: a model directory with `model.json`, described in place or exported to ONNX."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.embed.export import describe_st_model, export_onnx
from crmatrix.embed.models import resolve_model_dir


def run(conf: dict, out: Path) -> dict:
    if conf["format"] == "onnx":
        quantize = None if conf["quantize"] == "none" else conf["quantize"]
        return export_onnx(resolve_model_dir(conf["source"]), Path(out), quantize)
    meta = describe_st_model(conf["source"])
    with atomic.staged_dir(Path(out)) as d:
        atomic.write_json(d / "model.json", meta)
    return meta
