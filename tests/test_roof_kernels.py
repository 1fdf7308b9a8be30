"""The read, write and copy roof kernels compute what they claim, on the CPU and under the
CUDA simulator (correctness only: the simulator's times are never evidence)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernels import copy as roofs

pytestmark = pytest.mark.slow

TESTS = Path(__file__).parent


def test_cpu_roofs_read_write_and_copy_every_element():
    x = np.arange(1, 10_001, dtype=np.float32)
    s = np.zeros(1, np.float32)
    roofs.read_cpu(x, s)
    assert s[0] == 50_005_000  # accumulated in float64: exact, and exact in float32 too
    y = np.full(10_001, np.nan, np.float32)
    roofs.write_cpu(y)
    assert (y == 1).all()
    z = np.empty_like(x)
    roofs.copy_cpu(x, z)
    assert (z == x).all()


def test_the_roofs_declare_their_mix():
    assert {name: v.read_share for name, (_, v) in roofs.ROOFS.items()} == {
        "read": 1.0,
        "write": 0.0,
        "copy": 0.5,
    }


SCRIPT = r"""
import json
import numpy as np
from numba import cuda
from kernels import copy as roofs
stream = cuda.stream()
n = 4 * 256 * 3 + 37  # three full blocks of ILP x BLOCK and a ragged tail
x = np.arange(n, dtype=np.float32) % 7 + 1  # no zero: every element counts in the sum
dx = cuda.to_device(x)
ds = cuda.to_device(np.zeros(1, np.float32))
roofs._read_cuda(stream, dx, ds)
dy = cuda.to_device(np.full(n, np.nan, np.float32))
roofs._write_cuda(stream, dy)
dz = cuda.to_device(np.full(n, np.nan, np.float32))
roofs._copy_cuda(stream, dx, dz)
stream.synchronize()
print(json.dumps({"sum": float(ds.copy_to_host()[0]), "expected": float(x.sum()),
                  "ones": bool((dy.copy_to_host() == 1).all()),
                  "copied": bool((dz.copy_to_host() == x).all())}))
"""


def test_cuda_roofs_under_the_simulator():
    env = {
        **os.environ,
        "NUMBA_ENABLE_CUDASIM": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)]),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["sum"] == out["expected"] and out["ones"] and out["copied"]
