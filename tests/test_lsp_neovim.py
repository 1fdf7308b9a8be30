"""The README's Neovim 0.7-0.10 snippet, run in a real headless Neovim against `perfdsl lsp`.

Neovim's own LSP client is a consumer perfdsl did not write: it must attach
through the snippet exactly as printed in editors/README.md, receive the same
diagnostics `perfdsl check` gives, and see the server end with status 0 after
its `shutdown`/`exit` (Neovim reports "Client 1 quit with exit code 1"
otherwise). Skips when no `nvim` is installed (Debian: `apt-get install neovim`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import environment

pytestmark = pytest.mark.slow  # starts Neovim and the language server

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "editors" / "README.md"
STUDY = ROOT / "tests" / "check_cases" / "PD004_unknown_setting.perf"
MARKER = "-- perfdsl for Neovim 0.7 to 0.10"

# Wraps the client constructor to see the server's exit status, runs the README's
# snippet, opens the study, and writes what Neovim's client saw to $RESULT.
HARNESS = """
local seen = { exit_code = nil, diagnostics = {} }
local start_client = vim.lsp.start_client
vim.lsp.start_client = function(config)
  config.on_exit = function(code, signal) seen.exit_code = code end
  return start_client(config)
end
dofile(os.getenv("SNIPPET"))
vim.cmd("edit " .. os.getenv("STUDY"))
vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 20)
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(seen.diagnostics, { code = d.code, line = d.lnum + 1, column = d.col + 1 })
end
for _, client in pairs(vim.lsp.get_active_clients()) do client.stop() end
vim.wait(30000, function() return seen.exit_code ~= nil end, 20)
local out = io.open(os.getenv("RESULT"), "w")
out:write(vim.fn.json_encode(seen))
out:close()
"""


def _snippet() -> str:
    """The indented Lua block of the README that starts with MARKER, dedented."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == MARKER)
    block = []
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break
        block.append(line[4:])
    return "\n".join(block).strip() + "\n"


@pytest.mark.skipif(
    shutil.which("nvim") is None,
    reason="no `nvim` installed (tests/system_packages.sh, run by `make test`, installs it as root)",
)
def test_readme_snippet_attaches_neovim_and_the_server_exits_cleanly(tmp_path: Path) -> None:
    # The snippet starts `perfdsl` from the PATH, as a user's installation does.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "perfdsl"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m perfdsl "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    (tmp_path / "snippet.lua").write_text(_snippet(), encoding="utf-8")
    (tmp_path / "harness.lua").write_text(HARNESS, encoding="utf-8")
    env = environment()
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        SNIPPET=str(tmp_path / "snippet.lua"),
        STUDY=str(STUDY),
        RESULT=str(tmp_path / "result.json"),
        HOME=str(tmp_path),
    )
    subprocess.run(
        ["nvim", "--headless", "--clean", "-n", "-c", f"luafile {tmp_path / 'harness.lua'}", "-c", "qa!"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
        check=True,
    )
    seen = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert {(d["line"], d["column"], d["code"]) for d in seen["diagnostics"]} == _expected()
    assert seen["exit_code"] == 0


def _expected() -> set[tuple[int, int, str]]:
    """(line, column, code) of each diagnostic in the case's golden short form."""
    found = set()
    for line in STUDY.with_suffix(".expected").read_text(encoding="utf-8").splitlines():
        _, row, column, rest = line.split(":", 3)
        found.add((int(row), int(column), rest.split("[", 1)[1].split("]", 1)[0]))
    return found
