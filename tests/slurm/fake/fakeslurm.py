#!/usr/bin/env python3
"""A stand-in for Slurm's sbatch, squeue and scancel, for the matrix executor's tests.

Not Slurm: one JSON state file under $FAKE_SLURM_DIR (locked), array tasks run
as local processes by a detached scheduler per job, at most $FAKE_SLURM_SLOTS
at once over every job (a node's GPUs) and at most the array's `%N` per job.
$FAKE_SLURM_FORGET makes squeue drop ended tasks (a controller past MinJobAge),
and $FAKE_SLURM_ACCOUNTING makes sacct answer for them.
$FAKE_SLURM_END="INDEX=STATE,..." makes the scheduler end those tasks itself
once they run (TIMEOUT, PREEMPTED: SIGTERM first; NODE_FAIL: SIGKILL), as
Slurm would. Each command is a symlink to this file, dispatched by its name.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

DIR = Path(os.environ.get("FAKE_SLURM_DIR", "/tmp/fakeslurm"))
STATE = DIR / "state.json"


@contextmanager
def locked():
    DIR.mkdir(parents=True, exist_ok=True)
    with open(DIR / "lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        state = (
            json.loads(STATE.read_text()) if STATE.exists() else {"next": 100, "jobs": {}, "max_running": 0}
        )
        yield state
        STATE.write_text(json.dumps(state, indent=1))


def sbatch(argv: list[str]) -> int:
    if os.environ.get("FAKE_SLURM_REFUSE"):
        print("sbatch: error: Batch job submission failed: Invalid partition name specified", file=sys.stderr)
        return 1
    options = [a for a in argv if a.startswith("--")]
    rest = [a for a in argv if not a.startswith("--")]
    assert "--parsable" in options, argv
    script, args = rest[0], rest[1:]
    directives = dict(
        line[len("#SBATCH ") :].split("=", 1)
        for line in Path(script).read_text().splitlines()
        if line.startswith("#SBATCH --") and "=" in line
    )
    spec = directives["--array"]
    indices, _, throttle = spec.partition("%")
    tasks = []
    for part in indices.split(","):
        low, dash, high = part.partition("-")
        tasks += range(int(low), int(high) + 1) if dash else [int(low)]
    with locked() as state:
        job = state["next"]
        state["next"] += 10
        copy = DIR / f"job-{job}.sh"  # as Slurm does, the script is kept as it was at submission
        copy.write_text(Path(script).read_text())
        state["jobs"][str(job)] = {
            "name": directives.get("--job-name", "sbatch"),
            "script": str(copy),
            "args": args,
            "cwd": os.getcwd(),
            "output": directives.get("--output", "slurm-%A_%a.out"),
            "throttle": int(throttle) if throttle else None,
            "tasks": {str(t): {"state": "PENDING", "pid": None} for t in tasks},
            "max_running": 0,
        }
    with open(DIR / f"scheduler-{job}.log", "w") as log:
        subprocess.Popen(
            [sys.executable, __file__, "--schedule", str(job)], start_new_session=True, stdout=log, stderr=log
        )
    print(job)
    return 0


def squeue(argv: list[str]) -> int:
    name = next(a.split("=", 1)[1] for a in argv if a.startswith("--name="))
    with locked() as state:
        for job, record in state["jobs"].items():
            if record["name"] != name:
                continue
            pending = [t for t, task in record["tasks"].items() if task["state"] == "PENDING"]
            if pending:
                limit = f"%{record['throttle']}" if record["throttle"] else ""
                print(f"{job}_[{','.join(pending)}{limit}]|PENDING|JobArrayTaskLimit")
            for t, task in record["tasks"].items():
                forgotten = os.environ.get("FAKE_SLURM_FORGET") and task["state"] not in (
                    "PENDING",
                    "RUNNING",
                )
                if task["state"] != "PENDING" and not forgotten:
                    print(f"{job}_{t}|{task['state']}|{task.get('reason') or 'None'}")
    return 0


def sacct(argv: list[str]) -> int:
    """Accounting where $FAKE_SLURM_ACCOUNTING is set: every task of the jobs asked for."""
    if not os.environ.get("FAKE_SLURM_ACCOUNTING"):
        print("Slurm accounting storage is disabled", file=sys.stderr)
        return 1
    jobs = next((a.split("=", 1)[1].split(",") for a in argv if a.startswith("--jobs=")), [])
    with locked() as state:
        for job in jobs:
            for t, task in state["jobs"].get(job, {"tasks": {}})["tasks"].items():
                code = "0:0" if task["state"] == "COMPLETED" else "1:0"
                print(f"{job}_{t}|{task['state']}|{code}|{task.get('reason') or 'None'}")
    return 0


def scancel(argv: list[str]) -> int:
    with locked() as state:
        for label in argv:
            job, _, index = label.partition("_")
            record = state["jobs"][job]
            for t, task in record["tasks"].items():
                if index and t != index:
                    continue
                if task["state"] == "RUNNING" and task["pid"]:
                    os.killpg(task["pid"], signal.SIGTERM)
                if task["state"] in ("PENDING", "RUNNING"):
                    task["state"] = "CANCELLED"
    return 0


def schedule(job: str) -> None:
    slots = int(os.environ.get("FAKE_SLURM_SLOTS", "2"))
    endings = dict(p.split("=") for p in os.environ.get("FAKE_SLURM_END", "").split(",") if p)
    children: dict[str, subprocess.Popen] = {}
    while True:
        with locked() as state:
            record = state["jobs"][job]
            tasks = record["tasks"]
            for t, child in list(children.items()):
                status = child.poll()
                if status is not None:
                    del children[t]
                    if tasks[t]["state"] == "RUNNING":
                        tasks[t]["state"] = "COMPLETED" if status == 0 else "FAILED"
                elif (
                    t in endings
                    and tasks[t]["state"] == "RUNNING"
                    and time.time() - tasks[t]["started"] > 0.5
                ):
                    ending = endings.pop(t)
                    os.killpg(child.pid, signal.SIGKILL if ending == "NODE_FAIL" else signal.SIGTERM)
                    tasks[t]["state"], tasks[t]["reason"] = ending, f"planted {ending}"
            running = sum(
                1 for r in state["jobs"].values() for x in r["tasks"].values() if x["state"] == "RUNNING"
            )
            mine = sum(1 for x in tasks.values() if x["state"] == "RUNNING")
            for t, task in tasks.items():
                if (
                    task["state"] != "PENDING"
                    or running >= slots
                    or (record["throttle"] and mine >= record["throttle"])
                ):
                    continue
                output = record["output"].replace("%A", job).replace("%a", t)
                env = dict(
                    os.environ,
                    SLURM_JOB_ID=str(int(job) + 1 + int(t)),
                    SLURM_ARRAY_JOB_ID=job,
                    SLURM_ARRAY_TASK_ID=t,
                    SLURM_JOB_NAME=record["name"],
                    SLURMD_NODENAME="fakenode",
                    CUDA_VISIBLE_DEVICES=str(running % slots),
                )
                with open(Path(record["cwd"]) / output, "w") as out:
                    child = subprocess.Popen(
                        ["sh", record["script"], *record["args"]],
                        cwd=record["cwd"],
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                children[t] = child
                task.update(state="RUNNING", pid=child.pid, started=time.time())
                running, mine = running + 1, mine + 1
            record["max_running"] = max(record["max_running"], mine)
            state["max_running"] = max(state["max_running"], running)
            if not children and not any(x["state"] == "PENDING" for x in tasks.values()):
                return
        time.sleep(0.05)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--schedule"]:
        schedule(sys.argv[2])
        sys.exit(0)
    command = {"sbatch": sbatch, "squeue": squeue, "scancel": scancel, "sacct": sacct}[Path(sys.argv[0]).name]
    sys.exit(command(sys.argv[1:]))
