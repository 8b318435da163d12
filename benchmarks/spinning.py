"""ONNX Runtime's spinning pool threads, alone and beside another job (issue 48, point 3), run by
hand (not in CI):

    .venv/bin/python benchmarks/spinning.py CLONE [--model NAME] [--sample N] [--threads T] \
        [--note TEXT] [--out FILE | --write]

ONNX Runtime's intra-op threads spin between runs by default. crmatrix's embedder runs one
short text at a time, so they spin through every tokenization: faster when the job has its
cores to itself, costly when another process wants one. This times a seeded sample of a
finished run's distinct texts of one prepared model (`results/models/NAME`) through the bare
loop with ONNX Runtime's defaults, the bare loop without spinning, and crmatrix's embedder, in
turns, CPU and wall seconds: alone, and beside a process that keeps one core busy (as a job the
scheduler does not know of would). `--write`: benchmarks/results/spinning-<date>-clean.md.
"""

from __future__ import annotations

import datetime
import random
import subprocess
import sys

import finished_run
import numpy as np
from timing import commit, uptime
from work_floor import BareLoop, distinct_texts, in_turns, models

from crmatrix import atomic
from crmatrix.embed.backends import load_embedder

BUSY = "while True: pass"  # one core kept busy


def main() -> None:
    p = finished_run.parser("spinning.py", __doc__, "spinning")
    p.add_argument("--model", default="minilm", help="the prepared model (results/models/NAME; default minilm)")
    p.add_argument("--sample", type=int, default=300, help="texts timed (default 300)")
    p.add_argument("--threads", type=int, default=2, help="the embedding threads (default 2)")
    args = p.parse_args()
    clone = args.clone.resolve()
    model_dir = clone / "results" / "models" / args.model
    sha = atomic.read_json(model_dir / "model.json")["sha256"]
    if models(clone / "results").get(sha) != model_dir:
        raise SystemExit(f"{model_dir}: not a prepared model of the run")
    texts = random.Random(0).sample(sorted(distinct_texts(clone / "results")[sha].values()), args.sample)
    embedders = {"bare, ONNX Runtime's defaults": BareLoop(model_dir, args.threads),
                 "bare, no spinning": BareLoop(model_dir, args.threads, spinning=False),
                 "crmatrix's embedder": load_embedder(atomic.read_json(model_dir / "model.json"), model_dir,
                                                      args.threads)}
    first = [np.asarray(e.encode(texts[:20]), dtype=np.float32).tobytes() for e in embedders.values()]
    lines = [f"# Spinning pool threads, alone and beside a busy core — {datetime.date.today().isoformat()}", "",
             f"crmatrix at {commit()}; the texts and model of the finished run in `{clone.name}`. {args.note}".rstrip(),
             f"Load before: {uptime()}.", "",
             f"{args.sample} distinct texts of `{args.model}` (seeded), {args.threads} threads, the mean of two "
             "passes, the embedders taking turns on every 100 texts.", "",
             "| beside | embedder | texts/CPU s | texts/s |", "|---|---|---:|---:|"]
    for beside in ("nothing", "one busy core"):
        busy = subprocess.Popen([sys.executable, "-c", BUSY]) if beside != "nothing" else None
        try:
            for name, (cpu, wall) in in_turns(texts, embedders).items():
                lines.append(f"| {beside} | {name} | {args.sample / cpu:.1f} | {args.sample / wall:.1f} |")
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
    lines += ["", f"Load after: {uptime()}.", "",
              "The bare loop's vectors of the first 20 texts, spinning and not, byte-identical: "
              f"{'yes' if first[0] == first[1] else 'NO'}."]
    finished_run.emit(lines, args.out, args.write, "spinning")


if __name__ == "__main__":
    main()
