"""A real one-node Slurm cluster for the tests: munged, slurmctld and slurmd, no systemd.

Not a test module. Everything lives in one temporary directory: its own munge
key, munged's socket, a generated slurm.conf (exported as SLURM_CONF to
the commands the test runs), gres.conf, state, spool, logs and pid files, and
two free ports, so the cluster touches nothing of the machine's own Slurm or
munge and two test sessions do not meet. The node declares 4 CPUs (the
configuration, not the hardware, counts: SlurmdParameters=config_overrides)
and two GPUs that are device files standing in for GPUs (`File=/dev/null`,
`/dev/zero`; a bare count is refused as "count reported lower than
configured"), so a `--gres=gpu:1` limit, not the cores, is what keeps a third
task waiting. It installs nothing: tests/system_packages.sh (run by `make test`)
does that; where the daemons are absent or do not come up, `start` says why
and the tests skip with that reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import attrs

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo")
START_TIMEOUT_S = 40.0
GPUS = 2
CPUS = 4


class ClusterUnavailable(Exception):
    """Why no cluster could be started (a skip reason, one line)."""


@attrs.define
class Cluster:
    directory: Path
    environment: dict[str, str]
    processes: list[subprocess.Popen[bytes]]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _conf(directory: Path) -> str:
    d = directory
    return "\n".join(
        [
            "ClusterName=perfdsltest",
            "SlurmctldHost=localhost",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={d}/munge.socket",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SlurmdParameters=config_overrides",
            "MpiDefault=none",
            "ReturnToService=2",
            "MinJobAge=3600",
            "KillWait=10",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd.pid",
            f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={d}/slurmd.log",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "GresTypes=gpu",
            f"NodeName=localhost CPUs={CPUS} Gres=gpu:{GPUS} State=UNKNOWN",
            "PartitionName=ci Nodes=localhost Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def start(directory: Path) -> Cluster:
    """Start munged, slurmctld and slurmd under `directory`; ClusterUnavailable says why not."""
    missing = [name for name in DAEMONS if shutil.which(name) is None]
    if missing:
        raise ClusterUnavailable(
            f"Slurm is not installed ({', '.join(missing)} not found): tests/system_packages.sh installs "
            "Debian's slurm-wlm and munge as root"
        )
    if os.geteuid() != 0:
        raise ClusterUnavailable("the test cluster runs its daemons as root, and this is not root")
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o755)
    for sub in ("state", "spool"):
        (directory / sub).mkdir()
    # The cluster's own munge key: nothing depends on the machine's /etc/munge.
    key = directory / "munge.key"
    key.touch(mode=0o600)
    key.write_bytes(os.urandom(1024))
    (directory / "slurm.conf").write_text(_conf(directory))
    (directory / "gres.conf").write_text(
        "AutoDetect=off\n"
        + "".join(f"NodeName=localhost Name=gpu File={f}\n" for f in ("/dev/null", "/dev/zero")[:GPUS])
    )
    environment = dict(os.environ, SLURM_CONF=str(directory / "slurm.conf"))
    cluster = Cluster(directory, environment, [])
    munged = subprocess.run(
        [
            "munged",
            "--force",
            f"--socket={directory}/munge.socket",
            f"--key-file={directory}/munge.key",
            f"--log-file={directory}/munged.log",
            f"--pid-file={directory}/munged.pid",
            f"--seed-file={directory}/munged.seed",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if munged.returncode != 0:
        raise ClusterUnavailable(f"munged did not start: {munged.stderr.strip().splitlines()[-1:]}")
    for argv in (["slurmctld", "-D"], ["slurmd", "-D", "-N", "localhost"]):
        with open(directory / f"{argv[0]}.out", "wb") as log:
            cluster.processes.append(
                subprocess.Popen(argv, env=environment, stdout=log, stderr=subprocess.STDOUT)
            )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in cluster.processes):
            break
        state = subprocess.run(
            ["sinfo", "--noheader", "--format=%T"],
            capture_output=True,
            text=True,
            env=environment,
            timeout=30,
        )
        if state.returncode == 0 and state.stdout.strip() == "idle":
            return cluster
        time.sleep(0.5)
    why = _log_tail(directory)
    stop(cluster)
    raise ClusterUnavailable(f"the Slurm daemons did not come up in {START_TIMEOUT_S:g} s: {why}")


def stop(cluster: Cluster) -> None:
    """Shut the daemons down (scontrol shutdown, then by their own PIDs) and munged by its PID file."""
    subprocess.run(["scontrol", "shutdown"], env=cluster.environment, capture_output=True, timeout=30)
    for process in cluster.processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    pid_file = cluster.directory / "munged.pid"
    if pid_file.is_file():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text().strip()), 15)


def _log_tail(directory: Path) -> str:
    lines = []
    for name in ("slurmctld.out", "slurmd.out", "slurmctld.log", "slurmd.log"):
        path = directory / name
        if path.is_file():
            errors = [
                line for line in path.read_text(errors="replace").splitlines() if "error" in line.lower()
            ]
            lines += [f"{name}: {line.strip()}" for line in errors[-2:]]
    return "; ".join(lines) or "no error in the daemons' logs"
