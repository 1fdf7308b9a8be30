"""Running a command as a user who may not read every folder, even when the tests run as root."""

from __future__ import annotations

import os
import shutil

import pytest

DROP_OVERRIDES = "-dac_override,-dac_read_search,-fowner"


def without_file_overrides() -> list[str]:
    """A command prefix that drops root's licence to read any file or folder (none needed when
    not root); skips the test where root has no `setpriv` to drop it with."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv, which drops the right to read any folder")
    return [setpriv, "--bounding-set", DROP_OVERRIDES, "--inh-caps", DROP_OVERRIDES, "--"]
