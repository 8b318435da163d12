"""Where a command finds its matrix config, and the commands about a config: `validate`, `knobs`."""

from __future__ import annotations

import sys
from pathlib import Path

from crmatrix import CrmatrixError

DEFAULT_CONFIG = Path("config/config.yaml")


def config_path(args) -> Path | None:
    """--config, else config/config.yaml if present; None for neither (the command's own defaults)."""
    return Path(args.config) if args.config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)


def cmd_validate(args) -> int:
    from crmatrix import config
    from crmatrix.config import check
    from crmatrix.systems.registry import check_programs

    matrix = config.load(args.config)
    check.files(matrix)
    for name, system in matrix.systems.items():
        try:
            check_programs(name, system.spec)
        except CrmatrixError as e:
            raise CrmatrixError(f"{args.config}: {e}") from None
    for line in config.clamp_warnings(matrix):
        print(f"crmatrix: warning: {args.config}: {line}", file=sys.stderr)
    cells = sum(len(g["cells"]) for g in matrix.sweeps.values())
    n_sweeps = len(matrix.sweeps)
    swept = f", {cells} of them from {n_sweeps} sweep{'s' * (n_sweeps != 1)}" if cells else ""
    seen = len(matrix.corpora_of("view"))
    made = f" + {seen} docs-withheld view{'s' * (seen != 1)}" if seen else ""
    left = "; ".join(f"{d} {sum(by.values())} ({', '.join(f'{r} {n}' for r, n in by.items())})"
                     for d, by in matrix.undeclared.items())
    left = f"; rows of repositories no entry of repositories: declares, left out: {left}" if left else ""
    print(f"{args.config}: ok ({len(matrix.corpora) - seen} corpora{made}, {len(matrix.datasets)} datasets, "
          f"{len(matrix.systems)} systems, {len(matrix.arms)} arms{swept}){left}")
    return 0


def cmd_knobs(args) -> int:
    from crmatrix.engine import knobs

    print(knobs.markdown(), end="")
    return 0
