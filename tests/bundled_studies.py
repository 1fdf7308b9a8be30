"""The bundled studies, by name: the tests' one list of them.

Not a glob of studies/*.perf: a draft study left untracked in a checkout would
join every test that runs the bundled ones, and a tarball of the project holds
no git index to ask which files are tracked.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = (
    "batchnorm_imported",
    "batchnorm_numpy",
    "deferred_cleanup",
    "planted_null",
    "planted_slower",
    "reduction_chains",
    "reduction_launches",
    "rmsnorm_cpu",
    "rmsnorm_fusion",
    "transpose_bank_conflicts",
)
PATHS = tuple(ROOT / "studies" / f"{name}.perf" for name in NAMES)
