"""A fake stdio MCP server (the mcp SDK's MCPServer, formerly FastMCP) for the mcp adapter's tests.

    fake_mcp_server.py CORPUS

Tool `search(query, k)` answers like fake_search.py's search (JSON text); the same FAKE_MODE
directives apply, except that crash-on kills the whole server and hang-on blocks the call.
Each start writes $HOME/mcp-<pid>.pid, so a test can check that no server outlives its job.
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

sys.path.insert(0, str(Path(__file__).parent))
import fake_search

server = MCPServer("fake-search")
SYMBOLS: list[dict] = []


@server.tool()
def search(query: str, k: int = 10) -> str:
    Path(os.environ["HOME"], "last-env.json").write_text(json.dumps(dict(os.environ)))
    m = fake_search.modes(query)
    if "crash-on" in m:
        print(f"fake_mcp_server: crashing on {query!r}", file=sys.stderr, flush=True)
        os._exit(3)
    if "hang-on" in m:
        time.sleep(3600)
    return json.dumps({"data": {"symbols": fake_search.rank(SYMBOLS, query, k)}})


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        fake_search.index(Path(sys.argv[1]), Path(tmp))
        SYMBOLS.extend(json.loads((Path(tmp) / "fake-index.json").read_text())["symbols"])
    Path(os.environ["HOME"], f"mcp-{os.getpid()}.pid").write_text(str(os.getpid()))
    server.run()
