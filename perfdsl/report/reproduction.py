"""How to reproduce the result: the commands, the registration, the environment and the manifest.

The commands and the bundle (`commands_blocks`) open an imported study's
reproduction section too.
"""

from __future__ import annotations

import re
import shlex

from perfdsl.bundle.environment import EnvironmentRecord
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext

_MANIFEST_HASH_CHARS = 16
"""SHA-256 prefix printed per file: 64 bits, enough to tell files apart by eye and by grep."""


def render_reproduction(ctx: ReportContext, out: Blocks) -> None:
    """The exact commands, the environment, the bundle and its manifest hashes."""
    env = ctx.environment
    study_path = ctx.plan.study_path or f"{ctx.study.name.id}.perf"
    command = None if env is None else env.command_line
    out.add(*commands_blocks(command, study_path, ctx.bundle_label, ctx.run_id))
    out.add(_registration_paragraph(ctx))
    if env is None:
        out.add(f"Environment: not recorded ({fmt.message(ctx.environment_missing)}).")
    else:
        out.add(fmt.table("Environment of the run", ["Item", "Value"], _environment_rows(env)))
    files = ctx.manifest.files
    # A fixed-width listing, not a table: it reads like `sha256sum` output, and a
    # bundle has dozens of files, which as table rows would triple the PDF's layout time.
    width = max((len(fmt.count(entry.size)) for entry in files), default=1)
    listing = [
        f"{entry.sha256[:_MANIFEST_HASH_CHARS]:<{_MANIFEST_HASH_CHARS}}  "
        f"{fmt.count(entry.size):>{width}}  {' '.join(entry.path.split())}"
        for entry in files
    ]
    out.add(
        f"Manifest: every file of the bundle, with the first {_MANIFEST_HASH_CHARS} hex digits of its "
        "SHA-256 and its size in bytes (`perfdsl verify` rechecks them all):",
        _fenced(listing),
    )


def commands_blocks(
    command: tuple[str, ...] | None, study_path: str, bundle_label: str, run_id: str
) -> list[str]:
    """The commands that rerun, re-evaluate and rebuild this report, then the bundle and its run."""
    commands = [
        rerun_command(command, study_path),
        f"perfdsl evaluate {bundle_label}",
        f"perfdsl build --pdf {study_path} --results {bundle_label}",
    ]
    return [
        "The run, its evaluation and this report:",
        _fenced(commands),
        f"Bundle: {fmt.code(bundle_label)} (run {fmt.code(run_id)}).",
    ]


def rerun_command(command: tuple[str, ...] | None, study_path: str) -> str:
    """The recorded `perfdsl run ...` as a reader types it: `perfdsl`, not the executable's path.

    argv[0] is the path the command was invoked by (`/home/me/.venv/bin/perfdsl`,
    or `.../perfdsl/__main__.py` under `python -m`): it names one machine's
    installation and nothing a reader can rerun. The arguments are quoted as a
    shell needs them. A run started other than from the command line has no
    `run` argument to show, so the plain command stands in.
    """
    if not command or command[1:2] != ("run",):
        return shlex.join(["perfdsl", "run", study_path])
    return shlex.join(["perfdsl", *command[1:]])


def _fenced(lines: list[str]) -> str:
    """A fenced code block holding `lines` literally, whatever backticks they contain."""
    fence = "`" * max([3, *(len(run) + 1 for line in lines for run in re.findall(r"`+", line))])
    return "\n".join([fence, *lines, fence])


def _registration_paragraph(ctx: ReportContext) -> str:
    reg = ctx.registration
    registered = reg.predict_hash or ""
    parts = [
        f"Predictions registered at {fmt.text(reg.registered or 'an unrecorded time')} "
        f"with hash {fmt.code(registered[:_MANIFEST_HASH_CHARS] or fmt.MISSING)}"
    ]
    if ctx.current is None:
        parts.append("the study file was not checked against it")
    else:
        parts.append(fmt.message(ctx.current.message))
    study_hash = reg.study_hash or ""
    if study_hash:
        parts.append(f"study hash at the run {fmt.code(study_hash[:_MANIFEST_HASH_CHARS])}")
    if ctx.study.source.text != ctx.bundle_study_text:
        parts.append(
            "the study file differs from the study that ran (the report's prose is the file's, "
            "its evidence the run's)"
        )
    return "; ".join(parts) + "."


def _environment_rows(env: EnvironmentRecord) -> list[list[str]]:
    cores = "?" if env.usable_cores is None else env.usable_cores
    gpu = env.gpu.description if env.gpu else f"none ({env.gpu_missing or 'not recorded'})"
    rows = [
        ["perfdsl", fmt.text(env.perfdsl or fmt.MISSING)],
        ["Python", fmt.text(env.python or fmt.MISSING)],
        ["OS", fmt.text(env.system or fmt.MISSING)],
        ["CPU", fmt.text(f"{env.cpu_model or '?'}, {cores} usable cores")],
        ["GPU", fmt.message(gpu)],
        [
            "git",
            fmt.text(
                f"{(env.commit or '')[:12] or fmt.MISSING}{' (uncommitted changes)' if env.dirty else ''}"
            ),
        ],
        ["Run started", fmt.text(env.captured or fmt.MISSING)],
    ]
    # The run records a distribution it could not find as no version (null in environment.json).
    rows += [[fmt.text(name), fmt.text(version or "not installed")] for name, version in env.packages]
    rows += [[fmt.code(name), fmt.code(value)] for name, value in env.variables]
    return rows
