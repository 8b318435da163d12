"""A fake stdio MCP server (the mcp SDK's MCPServer, formerly FastMCP) for the mcp adapter's tests.

    fake_mcp_server.py CORPUS

Tool `search(query, k)` answers like fake_search.py's search (JSON text); the same FAKE_MODE
directives apply, except that crash-on kills the whole server and hang-on blocks the call;
also exit-with-child-on:TEXT (start a child holding the server's stdout, then exit 3).
Each start writes $HOME/mcp-<pid>.pid, so a test can check that no server outlives its job.
FAKE_SERVER_CHILD=1: each start also starts a child of its own (a helper, a watcher), which
stays when the server exits; FAKE_NO_INIT=1: the server starts but never answers. Each
child writes $HOME/child-<pid>.pid. FAKE_WRITE_CORPUS=REL: each start writes REL into CORPUS
(as a server keeping its index in the tree it serves; see fake_search.py).
"""

import json
import os
import subprocess
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
    if "exit-with-child-on" in m:
        start_child()
        print(f"fake_mcp_server: exiting on {query!r}", file=sys.stderr, flush=True)
        os._exit(3)
    if "crash-on" in m:
        print(f"fake_mcp_server: crashing on {query!r}", file=sys.stderr, flush=True)
        os._exit(3)
    if "hang-on" in m:
        time.sleep(3600)
    return json.dumps({"data": {"symbols": fake_search.rank(SYMBOLS, query, k)}})


def start_child() -> None:
    """A child in the server's process group, holding its stdout, that outlives the server."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    Path(os.environ["HOME"], f"child-{child.pid}.pid").write_text(str(child.pid))


if __name__ == "__main__":
    if os.environ.get("FAKE_NO_INIT") == "1":
        time.sleep(3600)
    if os.environ.get("FAKE_SERVER_CHILD") == "1":
        start_child()
    if "FAKE_WRITE_CORPUS" in os.environ:
        fake_search.write_corpus(Path(sys.argv[1]), os.environ["FAKE_WRITE_CORPUS"])
    with tempfile.TemporaryDirectory() as tmp:
        fake_search.index(Path(sys.argv[1]), Path(tmp))
        SYMBOLS.extend(json.loads((Path(tmp) / "fake-index.json").read_text())["symbols"])
    Path(os.environ["HOME"], f"mcp-{os.getpid()}.pid").write_text(str(os.getpid()))
    server.run()
