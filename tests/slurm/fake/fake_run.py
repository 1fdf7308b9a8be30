#!/usr/bin/env python3
"""A stand-in for the python that runs `perfdsl run` in a cell: `fake_run.py -m perfdsl run STUDY ...`.

It does what the task relies on and nothing else: prints the bundle path and
exits 0, or fails with perfdsl's one-line error, or runs until it is signalled,
as $FAKE_RUN_BEHAVIOUR says for the cell's shape ("N=4096:ok,N=65536:fail,...";
default ok). Every start is appended to $FAKE_RUN_LOG, so a test can count runs.
"""

import os
import signal
import sys
import time
from pathlib import Path

argv = sys.argv[1:]
assert argv[:3] == ["-m", "perfdsl", "run"], argv
artifacts = Path(argv[argv.index("--artifacts") + 1])
shape = argv[argv.index("--shape") + 1] if "--shape" in argv else "all"
behaviour = dict(p.split(":") for p in os.environ.get("FAKE_RUN_BEHAVIOUR", "").split(",") if p)
with open(os.environ["FAKE_RUN_LOG"], "a") as log:
    log.write(f"{shape}\n")
mode = behaviour.get(shape, "ok")
if mode == "fail":
    print("perfdsl run: error: planted failure", file=sys.stderr)
    sys.exit(2)
if mode == "sleep":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    time.sleep(120)
    sys.exit(1)
time.sleep(float(os.environ.get("FAKE_RUN_SECONDS", "0.2")))
bundle = artifacts / "study" / f"run-{os.getpid()}"
bundle.mkdir(parents=True)
(bundle / "manifest.json").write_text("{}")
print(bundle)
