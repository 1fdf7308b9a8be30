"""How to reproduce the result: the commands, the registration, the environment and the manifest."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext

_MANIFEST_HASH_CHARS = 16
"""SHA-256 prefix printed per file: 64 bits, enough to tell files apart by eye and by grep."""


def render_reproduction(ctx: ReportContext, out: Blocks) -> None:
    """The exact commands, the environment, the bundle and its manifest hashes."""
    env = ctx.environment or {}
    study_path = ctx.plan.study_path or f"{ctx.study.name.id}.perf"
    command = env.get("command_line")
    ran = " ".join(command) if command else f"perfdsl run {study_path}"
    commands = [
        ran,
        f"perfdsl evaluate {ctx.bundle_label}",
        f"perfdsl build --pdf {study_path} --results {ctx.bundle_label}",
    ]
    out.add("The run, its evaluation and this report:", _fenced(commands))
    out.add(f"Bundle: {fmt.code(ctx.bundle_label)} (run {fmt.code(ctx.run_id)}).")
    out.add(_registration_paragraph(ctx))
    if ctx.environment is None:
        out.add(f"Environment: not recorded ({fmt.message(ctx.environment_missing)}).")
    else:
        out.add(fmt.table("Environment of the run", ["Item", "Value"], _environment_rows(env)))
    files = sorted((ctx.manifest.get("files") or {}).items())
    # A fixed-width listing, not a table: it reads like `sha256sum` output, and a
    # bundle has dozens of files, which as table rows would triple the PDF's layout time.
    width = max((len(fmt.count(entry.get("size"))) for _, entry in files), default=1)
    listing = [
        f"{str(entry.get('sha256', ''))[:_MANIFEST_HASH_CHARS]:<{_MANIFEST_HASH_CHARS}}  "
        f"{fmt.count(entry.get('size')):>{width}}  {' '.join(name.split())}"
        for name, entry in files
    ]
    out.add(
        f"Manifest: every file of the bundle, with the first {_MANIFEST_HASH_CHARS} hex digits of its "
        "SHA-256 and its size in bytes (`perfdsl verify` rechecks them all):",
        _fenced(listing),
    )


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


def _environment_rows(env: Mapping[str, Any]) -> list[list[str]]:
    python = env.get("python") or {}
    system = env.get("os") or {}
    cpu = env.get("cpu") or {}
    gpu = env.get("gpu")
    git = env.get("git") or {}
    rows = [
        ["perfdsl", fmt.text(env.get("perfdsl", fmt.MISSING))],
        [
            "Python",
            fmt.text(
                f"{python.get('implementation', '')} {python.get('version', '')}".strip() or fmt.MISSING
            ),
        ],
        [
            "OS",
            fmt.text(
                f"{system.get('system', '')} {system.get('release', '')} {system.get('machine', '')}".strip()
                or fmt.MISSING
            ),
        ],
        ["CPU", fmt.text(f"{cpu.get('model', '?')}, {cpu.get('usable_cores', '?')} usable cores")],
        ["GPU", fmt.message(_gpu(gpu) if gpu else f"none ({env.get('gpu_missing', 'not recorded')})")],
        [
            "git",
            fmt.text(
                f"{str(git.get('commit', ''))[:12] or fmt.MISSING}"
                f"{' (uncommitted changes)' if git.get('dirty') else ''}"
            ),
        ],
        ["Run started", fmt.text(env.get("time_utc", fmt.MISSING))],
    ]
    rows += [
        [fmt.text(name), fmt.text(version)] for name, version in sorted((env.get("packages") or {}).items())
    ]
    rows += [
        [fmt.code(name), fmt.code(value)]
        for name, value in sorted((env.get("environment_variables") or {}).items())
    ]
    return rows


def _gpu(gpu: Any) -> str:
    if isinstance(gpu, Mapping):
        shown = [str(gpu.get(k)) for k in ("name", "driver", "compute_capability") if gpu.get(k)]
        return ", ".join(shown) or "recorded"
    return str(gpu)
