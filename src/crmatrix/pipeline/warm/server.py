"""The warm server of a local run (crmatrix.pipeline.warm): it imports the light scripts' modules
once (one script's at a time, between jobs), and forks one process per job a client hands it,
which becomes the job (its stdin, stdout and stderr, working directory, umask and environment)
and runs its script as `python SCRIPT ARGS` would. Each job's exit status goes to its client once the server has reaped
the process, so the run's CPU as `/usr/bin/time` or getrusage see it still holds every job's.

Run as `python -m crmatrix.pipeline.warm.server NAME SCRIPT...` (NAME: its abstract socket's).
It serves its own user's processes alone. SIGTERM stops it once its running jobs have ended; it
also stops when its parent (Snakemake) is gone.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import gc
import importlib
import importlib.machinery
import importlib.util
import os
import selectors
import signal
import socket
import struct
import sys
import tempfile
import threading
import traceback
import types

from crmatrix.pipeline.warm import client, wire

# What a job's environment may have that the server's has not: set per job by Snakemake (its
# tmpdir resource) or by the shell starting the job, and read by no module as it is imported.
PER_JOB = frozenset({"TMPDIR", "TMP", "TEMP", "TEMPDIR", "_", "SHLVL", "PWD", "OLDPWD"})
# how long a connected client may take to send its request
REQUEST_TIMEOUT_S = 10.0
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def preload(scripts: list[str]) -> list[str]:
    """Import what each script imports first thing, then call the `warm()` of each of its
    `crmatrix.stages` modules (what their jobs load once they run: a system's code, a table).
    The names imported; a failure is logged and left for the job to meet itself."""
    done = []
    for script in scripts:
        try:
            with open(script, "rb") as f:
                tree = ast.parse(f.read(), script)
        except (OSError, SyntaxError) as e:
            print(f"warm: {script}: not read ({e})", file=sys.stderr)
            continue
        for name in _top_imports(tree):
            try:
                module = importlib.import_module(name)
                if name.startswith("crmatrix.stages.") and hasattr(module, "warm"):
                    module.warm()
            except Exception:  # the job will import it and fail in its own log, as it would cold
                print(f"warm: {script}: importing {name} failed:\n{traceback.format_exc()}", file=sys.stderr)
                continue
            done.append(name)
    return done


def _top_imports(tree: ast.Module) -> list[str]:
    """The modules a script's top-level imports load (`from a import b`: a.b if it is one)."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names
                      if _is_submodule(node.module, alias.name)]
    return names


def _is_submodule(package: str, name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):  # `package` is a module, not a package
        return False


def refusal(env: dict[str, str], baseline: dict[str, str]) -> list[str]:
    """The variables (sorted) by which a job's environment is not the server's, PER_JOB aside:
    any could change what an imported module did (a thread count read as numpy loaded, a path)."""
    keys = (env.keys() | baseline.keys()) - PER_JOB
    return sorted(k for k in keys if env.get(k) != baseline.get(k))


class Server:
    def __init__(self, listener: socket.socket, baseline: dict[str, str], parent: int):
        self.listener, self.baseline, self.parent = listener, baseline, parent
        self.jobs: dict[int, socket.socket] = {}  # pid -> its client's connection
        self.stopping = False
        self.started = self.refused = 0
        self.selector = selectors.DefaultSelector()
        self.wake = os.pipe()  # SIGCHLD's wake-up of the selector: (read end, write end)

    def serve(self, scripts: list[str]) -> None:
        """Serve jobs until stopped, preloading `scripts` one at a time between them, in their
        order: a job whose script's modules are not loaded yet imports the rest itself, as a plain
        job would, rather than wait for the modules of scripts whose jobs come later."""
        wake_r, wake_w = self.wake
        for fd in self.wake:
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the selector
        self.listener.setblocking(False)
        with self.selector as sel:
            sel.register(self.listener, selectors.EVENT_READ)
            sel.register(wake_r, selectors.EVENT_READ)
            loaded = 0
            while not self.stopping and os.getppid() == self.parent:
                if scripts:
                    loaded += len(preload([scripts.pop(0)]))
                    if not scripts:
                        gc.freeze()  # what the server made is shared by every job: their collections pass it by
                        print(f"warm: {loaded} modules preloaded", file=sys.stderr)
                for key, _ in sel.select(timeout=0 if scripts else 1.0):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        while _drained(wake_r):
                            pass
                self._reap(block=False)
        self.listener.close()
        self._reap(block=True)
        print(f"warm: {self.started} jobs started warm, {self.refused} refused", file=sys.stderr)

    def stop(self, *_):
        """SIGTERM's handler: serve no more, once the running jobs end."""
        self.stopping = True

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except BlockingIOError:
                return
            try:
                self._start(conn)
            except Exception:  # one client's fault is not the run's: it sees EOF and reports it
                print(f"warm: a job not started:\n{traceback.format_exc()}", file=sys.stderr)
                conn.close()

    def _start(self, conn: socket.socket) -> None:
        # an abstract socket has no file permissions: another user's process may connect
        _pid, uid, _gid = _PEERCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
        if uid != os.getuid():
            print(f"warm: a connection from user {uid} refused", file=sys.stderr)
            conn.close()
            return
        conn.settimeout(REQUEST_TIMEOUT_S)
        request, fds = wire.read_request(conn)
        conn.settimeout(None)
        differs = refusal(request["env"], self.baseline)
        if differs:
            print(f"warm: {request['argv'][0]} runs plainly: its environment differs in "
                  f"{', '.join(differs)}", file=sys.stderr)
            for fd in fds:
                os.close(fd)
            wire.send_int(conn, 0)
            conn.close()
            self.refused += 1
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 70  # EX_SOFTWARE: the job could not be set up
            try:
                self._close_own()
                code = become(request, fds, conn)
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        self.jobs[pid] = conn
        self.started += 1
        try:
            wire.send_int(conn, pid)
        except OSError:  # the client is gone: the job ends itself (become's watcher)
            pass

    def _close_own(self) -> None:
        """In a job's process: let go of the server's signals, sockets and pipe."""
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        self.selector.close()
        self.listener.close()
        for fd in self.wake:
            os.close(fd)
        for conn in self.jobs.values():
            conn.close()

    def _reap(self, block: bool) -> None:
        while self.jobs:
            try:
                pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.jobs.pop(pid, None)
            if conn is not None:
                try:
                    wire.send_int(conn, os.waitstatus_to_exitcode(status))
                except OSError:
                    pass
                conn.close()


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 4096))
    except BlockingIOError:
        return False


def become(request: dict, fds: list[int], conn: socket.socket) -> int:
    """In the forked process: take the job's descriptors, directory, umask and environment, run
    its script, and return its exit code."""
    for target, fd in zip(wire.STDIO, fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # found again from the job's TMPDIR
    threading.Thread(target=_end_with_client, args=(conn,), daemon=True).start()
    return run_script(request["argv"])


def _end_with_client(conn: socket.socket) -> None:
    """A client killed outright (SIGKILL: no signal to pass on) takes its job with it, as it
    would the plain job it stands for."""
    try:
        data = conn.recv(1)
    except OSError:
        data = b""
    if not data:
        os.kill(os.getpid(), signal.SIGKILL)


def run_script(argv: list[str]) -> int:
    """Run `argv[0]` as the __main__ module with `argv` as sys.argv, as `python SCRIPT ARGS` does,
    and return the code the interpreter would exit with (its exit functions run, its standard
    streams flushed). Not runpy.run_path: it puts the server's __main__ back before the exit
    functions run, which read the job's (a benchmark's JOB_CLOCK does)."""
    script = argv[0]
    sys.argv[:] = argv  # in place: a module imported before may hold the list (a default argument)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__builtins__ = builtins
    main.__cached__ = main.__spec__ = None
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", script)
    sys.modules["__main__"] = main
    try:
        with open(script, "rb") as f:
            source = f.read()
        exec(compile(source, script, "exec"), main.__dict__)
        code = 0
    except SystemExit as e:
        code = exit_code(e)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 128 + signal.SIGINT
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
    return code


def exit_code(e: SystemExit) -> int:
    """The status `raise SystemExit(e.code)` ends an interpreter with (a message goes to stderr)."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    print(e.code, file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    if len(argv) < 1:
        sys.exit("crmatrix: the warm server takes its socket's name and the scripts to preload")
    name, scripts = argv[0], argv[1:]
    client.IN_SERVER = True
    baseline = dict(os.environ)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(wire.address(name))
    listener.listen(128)  # bound before preloading: a job that comes meanwhile is served, warm
    serving = Server(listener, baseline, parent)
    signal.signal(signal.SIGTERM, serving.stop)  # a run over before its server is ready stops it cleanly
    if scripts:
        sys.path[0] = os.path.dirname(os.path.abspath(scripts[0]))
    print(f"warm: serving {name}", file=sys.stderr)
    serving.serve(list(scripts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
