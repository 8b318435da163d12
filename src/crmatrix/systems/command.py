"""`command`: any CLI, run once per query (or per batch of queries) from an argv template.

    systems:
      mytool:
        type: command
        options:
          index: [mytool, index, "{corpus}", --out, "{index}"]          # optional, its own job
          search: [mytool, search, --index, "{index}", -k, "{k}", "{query}"]
          hits: "data.symbols[]"
          fields: {symbol: name, path: file, start_line: line}

The answer is the process's stdout, parsed (`parser`, default json) and mapped to hits (see
hitmap). In batch mode (`batch: {search: [...], results: "results[]"}`) the queries go to
the tool as a JSON file (`{queries}`) and the answer lists one result per query, in order.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from crmatrix import CrmatrixError, atomic
from crmatrix.systems import hitmap, sandbox, templates
from crmatrix.systems.answers import Answer, QueryFailure
from crmatrix.systems.external import PER_QUERY, ExternalSystem
from crmatrix.systems.registry import register


@register("command")
class CommandSystem(ExternalSystem):
    CALL_KEY = "search"

    @classmethod
    def needs_tool(cls, options: dict) -> bool:
        argvs = [*options["search"], *(options.get("batch") or {}).get("search", [])]
        return any("tool" in templates.names(a) for a in argvs)

    @classmethod
    def argvs(cls, options: dict) -> dict[str, list | None]:
        return {**super().argvs(options), "search": options["search"],
                "batch.search": (options.get("batch") or {}).get("search")}

    @classmethod
    def check_options(cls, options: dict) -> None:
        templates.check("search", options["search"], PER_QUERY)
        if options.get("batch"):
            templates.check("batch.search", options["batch"]["search"], PER_QUERY - {"query"} | {"queries"})
            if not any("queries" in templates.names(a) for a in options["batch"]["search"]):
                raise CrmatrixError("batch.search: expected a {queries} placeholder (the file of queries)")
        super().check_options(options)

    def __init__(self, ctx):
        super().__init__(ctx)
        batch = self.options.get("batch")
        self.batch_size = batch["size"] if batch else None

    def _run(self, template: list[str], values: dict[str, Any], timeout_s: float, what: str) -> str:
        argv = templates.fill_argv(template, values)
        return sandbox.run(argv, env=self.env, cwd=self.cwd, timeout_s=timeout_s, what=what)

    def search(self, query: str, method: str, k: int) -> Answer:
        text = self._run(self.options["search"], self.call_values(method, query, k), self.ctx.timeout_s,
                         method)
        return self.answer(self.parse(text), text, k)

    def search_batch(self, queries: list[str], method: str, k: int) -> list[Answer | QueryFailure]:
        """One call for many queries; a result that fails to map fails its query alone."""
        batch = self.options["batch"]
        # a file of its own: the query jobs of one index share its HOME, and may run at once
        fd, name = tempfile.mkstemp(prefix="crmatrix-queries-", suffix=".json", dir=self.home / "tmp")
        os.close(fd)
        qfile = Path(name)
        atomic.write_text(qfile, json.dumps(queries, ensure_ascii=False))
        values = {**self.call_values(method, None, k), "queries": str(qfile)}
        try:
            text = self._run(batch["search"], values, self.ctx.timeout_s * len(queries), f"{method} (batch)")
        finally:
            qfile.unlink(missing_ok=True)
        results = hitmap.select(self.parse(text), batch["results"])
        if len(results) != len(queries):
            raise QueryFailure("bad-output", f"batch: {len(results)} results for {len(queries)} queries")
        out: list[Answer | QueryFailure] = []
        for item in results:
            try:
                out.append(self.answer(item, json.dumps(item, ensure_ascii=False), k))
            except QueryFailure as f:
                out.append(f)
        return out
