"""fetch_corpus: a pinned source, narrowed by the corpus's globs, as a tree and its manifest."""

from __future__ import annotations

import tempfile
from pathlib import Path

from crmatrix import CrmatrixError, atomic, pins
from crmatrix.corpus import select_files, write_source


def run(name: str, corpus: dict, tree: Path, manifest_path: Path, mirrors: list[str], registries: dict,
        file: Path | None = None) -> dict:
    """Fetch the pinned source, keep the selected files as `tree`, write `manifest_path`.
    `file`: the benchmark file a repoqa or ds1000 corpus is written out from (the workflow's
    input; its config entry then need not name it).

    Nothing is left at either output unless everything succeeded.
    """
    if file is not None:
        corpus = {k: ({**v, "file": str(file)} if k in pins.FILE_KINDS else v) for k, v in corpus.items()}
    pin = pins.Pin.from_config(name, corpus)
    include = corpus.get("include") or ["**"]
    exclude = corpus.get("exclude") or []
    with tempfile.TemporaryDirectory(prefix="crmatrix-fetch-") as scratch:
        if pin.kind in pins.FILE_KINDS:
            src, origin = Path(scratch), write_source(pin.kind, pin.spec[pin.kind], Path(scratch))
        else:
            src, origin = pins.fetch(pin, Path(scratch), mirrors, registries)
        with atomic.staged_dir(Path(tree)) as stage:
            part = select_files(src, stage, include, exclude)
            if not part["files"]:
                raise CrmatrixError(f"corpora.{name}: include/exclude select no readable file from {origin['source']}")
    manifest = {"corpus": name, "pin": {"kind": pin.kind, **pin.spec}, "origin": origin,
                "include": include, "exclude": exclude, **part}
    atomic.write_json(Path(manifest_path), manifest)
    return manifest
