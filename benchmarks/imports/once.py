"""One process for hyperfine: `python once.py VARIANT CALLS` runs the variant CALLS times."""

from __future__ import annotations

import sys

from workload import bound_call

if __name__ == "__main__":
    call = bound_call(sys.argv[1])
    for _ in range(int(sys.argv[2])):
        call()
