"""A real single-node Slurm on this machine, for tests/test_slurm_real.py: Debian's packages
(installed if missing), the node as `slurmd -C` sees it, every file under one scratch directory,
and munged, slurmctld and slurmd run in the foreground as children of the test, so their PIDs are
known and they die with it. No slurmdbd: `sacct` answers "accounting storage is disabled", and
the controller keeps each finished job for MinJobAge seconds (`scontrol show job`, `squeue -t all`).

Memory is enforced without cgroups (`JobAcctGatherParams=OverMemoryKill`): a job over its --mem
is killed within the 2 s sampling period and ends FAILED, reason JobLaunchFailure, exit 0:9."""

import contextlib
import ctypes
import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PACKAGES = ["slurm-wlm", "munge"]
# The executor plugin's job step drops every SLURM_* variable (SLURM_CONF too) before its inner
# srun, which then reads the default configuration file: a link to ours while the cluster is up.
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")
SCRATCH_PREFIX = "crmatrix-slurm-"
# One cluster per machine: the link above is shared, so a second run of the test waits for none.
LOCK = Path(tempfile.gettempdir()) / "crmatrix-slurm-real.lock"
PARTITIONS = ("main", "short")  # the partitions profiles/slurm names, so it runs unchanged

SLURM_CONF = """\
ClusterName=crmatrix
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge/munge.socket.2
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=2
JobAcctGatherParams=OverMemoryKill
DefMemPerCPU=1000
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/run/slurmctld.pid
SlurmdPidFile={root}/run/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
{node_line} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes={node} Default=YES MaxTime=INFINITE State=UP
PartitionName=short Nodes={node} MaxTime=INFINITE State=UP
"""


def run(*cmd: str, timeout: float = 30, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def unavailable() -> str | None:
    """Why this machine cannot have the test's Slurm, or None."""
    if os.geteuid() != 0:
        return "not root: the test installs Slurm with apt-get and runs its daemons as root"
    if shutil.which("apt-get") is None:
        return "no apt-get: the test installs Debian's slurm-wlm and munge"
    if (os.cpu_count() or 1) < 2:
        return "fewer than 2 CPUs: the tests' group jobs, and embedding jobs, ask Slurm for 2"
    if not ours(DEFAULT_CONF) if DEFAULT_CONF.is_symlink() else DEFAULT_CONF.exists():
        return f"this machine has a Slurm of its own ({DEFAULT_CONF}), which the test would not replace"
    return None


def ours(link: Path) -> bool:
    """A link this test made (perhaps left by a run that was killed before its teardown)."""
    return Path(os.readlink(link)).parent.parent.name.startswith(SCRATCH_PREFIX)


def installed() -> bool:
    proc = run("dpkg-query", "-W", "-f=${Status}\\n", *PACKAGES)
    return proc.returncode == 0 and proc.stdout.split("\n")[:-1] == ["install ok installed"] * len(PACKAGES)


def install() -> str | None:
    """Installs the packages unless they are; returns why they could not be, or None."""
    if installed():
        return None
    # apt's lock may be held by another install on this machine: wait for it, within the timeout
    apt = ["apt-get", "-q", "-o", "DPkg::Lock::Timeout=120"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = [*apt, "install", "-y", "--no-install-recommends", *PACKAGES]
    try:
        proc = run(*cmd, timeout=300, env=env)
        if proc.returncode != 0:  # most often: no package lists yet
            update = run(*apt, "update", timeout=300, env=env)
            proc = run(*cmd, timeout=300, env=env) if update.returncode == 0 else update
    except subprocess.TimeoutExpired as e:
        return f"Debian packages {' '.join(PACKAGES)} unavailable: {' '.join(e.cmd)}: no answer in {e.timeout} s"
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        return f"Debian packages {' '.join(PACKAGES)} unavailable: {' '.join(cmd)}: {last}"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the daemon, before exec: SIGTERM when the test's process dies, even by SIGKILL."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Slurm:
    """The running cluster. `env` is the environment to run Slurm's commands and Snakemake in."""

    def __init__(self) -> None:
        self.lock = LOCK.open("w")
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.lock.close()
            raise
        self.root = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        self.conf = self.root / "etc" / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self.daemons: dict[str, subprocess.Popen] = {}
        self.made_conf_dir = False

    def start(self) -> None:
        """Configures and starts the daemons; waits (at most 60 s) until the node is idle."""
        root = self.root
        for sub in ("etc", "munge", "state", "spool", "run", "log"):
            (root / sub).mkdir()
        root.chmod(0o755)  # munged refuses a socket under a directory not everyone may enter (mkdtemp: 700)
        key = root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        node_line = run("slurmd", "-C").stdout.splitlines()[0]  # NodeName=... CPUs=... RealMemory=...
        node = re.match(r"NodeName=(\S+)", node_line).group(1)
        self.conf.write_text(SLURM_CONF.format(root=root, node=node, node_line=node_line, ctld_port=free_port(),
                                               slurmd_port=free_port()))
        if not DEFAULT_CONF.parent.is_dir():
            DEFAULT_CONF.parent.mkdir(parents=True)
            self.made_conf_dir = True
        # what a run killed before its teardown left: ours (unavailable() said so) and, by the lock, unused
        if DEFAULT_CONF.is_symlink():
            DEFAULT_CONF.unlink()
        for stale in root.parent.glob(f"{SCRATCH_PREFIX}*"):
            if stale != root:
                shutil.rmtree(stale, ignore_errors=True)
        DEFAULT_CONF.symlink_to(self.conf)

        self.daemon("munged", "munged", "--foreground", f"--socket={root}/munge/munge.socket.2",
                    f"--key-file={key}", f"--pid-file={root}/run/munged.pid", f"--seed-file={root}/munge/seed",
                    f"--log-file={root}/log/munged.log")
        self.wait(lambda: (root / "munge" / "munge.socket.2").exists(), 30, "munged's socket")
        self.daemon("slurmctld", "slurmctld", "-D", "-f", str(self.conf))
        self.daemon("slurmd", "slurmd", "-D", "-f", str(self.conf))
        # one line per partition the node is in
        self.wait(lambda: set(self.query("sinfo", "-h", "-N", "-o", "%T").split()) == {"idle"}, 60,
                  "the node to be idle")

    def daemon(self, name: str, *cmd: str) -> None:
        with (self.root / "log" / f"{name}.out").open("w") as out:
            self.daemons[name] = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                                  env=self.env, preexec_fn=_die_with_parent)

    def wait(self, ready, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not ready():
            dead = {name: p.returncode for name, p in self.daemons.items() if p.poll() is not None}
            if dead or time.monotonic() > deadline:
                logs = "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}"
                                 for log in sorted((self.root / "log").iterdir()))
                raise RuntimeError(f"Slurm: waited {seconds} s in vain for {what} "
                                   f"(daemons exited: {dead or 'none'})\n{logs}")
            time.sleep(0.3)

    def query(self, *cmd: str) -> str:
        proc = run(*cmd, env=self.env)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    def jobs(self, workdir: Path) -> list[dict[str, str]]:
        """Every job submitted from `workdir` that the controller holds, as scontrol shows it
        (JobId, JobName, JobState, Reason, ExitCode, Partition, CPUs/Task, MinMemoryNode, TimeLimit, ...)."""
        out = self.query("scontrol", "show", "job", "--oneliner")
        jobs = [dict(field.split("=", 1) for field in line.split() if "=" in field) for line in out.splitlines()]
        return sorted((j for j in jobs if j.get("WorkDir") == str(workdir)), key=lambda j: int(j["JobId"]))

    def stop(self) -> None:
        """Cancels every job (a job's slurmstepd outlives slurmd), stops the daemons by their
        PIDs, removes the link and the scratch directory. Safe after a partial start."""
        try:
            if "slurmctld" in self.daemons and self.daemons["slurmctld"].poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    run("scancel", "--user=root", env=self.env)
                    deadline = time.monotonic() + 30
                    while self.query("squeue", "-h", "-o", "%i") and time.monotonic() < deadline:
                        time.sleep(0.5)
            for name in ("slurmd", "slurmctld", "munged"):
                proc = self.daemons.get(name)
                if proc is None:
                    continue
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=15)
        finally:
            if DEFAULT_CONF.is_symlink() and Path(os.readlink(DEFAULT_CONF)) == self.conf:
                DEFAULT_CONF.unlink()
            if self.made_conf_dir:
                with contextlib.suppress(OSError):
                    DEFAULT_CONF.parent.rmdir()
            shutil.rmtree(self.root, ignore_errors=True)
            self.lock.close()  # releases the lock
