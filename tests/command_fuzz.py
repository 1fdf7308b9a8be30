"""Helpers for fuzzing every command through `perfdsl.cli.main`: inputs, mutations, one case's outcome.

Not a test module (tests/test_fuzz_commands.py is). Every case runs the real
command line in this process, from a directory of its own, with its standard
streams captured: what a user would see on the terminal is what is judged.
Mutations are drawn from a seeded `random.Random`, so a failing case is named
by its seed and replays alone.

A bundle mutation copies what happens to archived bundles: files deleted,
truncated or duplicated, JSON values of the wrong type (NaN, infinities, huge
and negative numbers, non-ASCII text, paths that climb out of the bundle),
CSV rows dropped, garbled or widened, the manifest's hashes wrong, a format
version changed. Most mutated bundles are then sealed again (the manifest
rewritten to match), as a writer with a bug would leave them, so that the
readers behind the manifest check are reached as well as the check itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import random
import re
import shutil
import signal
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from perfdsl import cli

TRACEBACK = "Traceback (most recent call last)"
CASE_LIMIT_S = 300
"""A case still running after this long is a hang, recorded as a failure of its own."""
TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_.:]*|[0-9.]+|\"[^\"\n]*\"|.", re.S)
ODD_TEXT = [
    "",
    "é",
    "µs",
    "\u2028",
    "\ufeff",
    "\x00",
    "\\",
    '"',
    "{",
    "}",
    "1e999",
    "-1",
    "NaN",
    "..",
    "\t\n",
]
ODD_NUMBERS = ["0", "1", "-1", "1e999", "1e40000", "99999999999", "0.0"]
"""What replaces a number in a study: the zeros, signs and overflows people type by mistake."""
ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    -(10**6),
    10**30,
    1e308,
    5e-324,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "x",
    "é\u2028\x00",
    "12",
    "nan",
    "../../outside.csv",
    "/nonexistent/file.csv",
    [],
    [1, 2],
    {},
    {"a": 1},
]
SCHEMAS = ["perfdsl.results/0", "perfdsl.results/1", "perfdsl.results/99", "perfdsl.plan/1", None, 3, ""]


class WouldRun(Exception):
    """Raised in place of executing kernels: the case got past every check a run makes first."""


@attrs.frozen
class Outcome:
    """What one command line did: its status, its output, and any exception that escaped it."""

    argv: tuple[str, ...]
    status: int | None
    stdout: str
    stderr: str
    escaped: str | None
    """The traceback of an exception that escaped `main`, or None."""
    would_run: bool = False
    hung: bool = False


class _Unclosable(io.BytesIO):
    """A byte stream the command may close (the language server does on `exit`) and we still read."""

    def close(self) -> None:
        self.flush()


class _Hang(BaseException):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hang()


def invoke(argv: Sequence[str], cwd: Path, stdin: bytes = b"") -> Outcome:
    """`perfdsl ARGV` in this process from `cwd`, its streams captured, the process state restored."""
    out_bytes, err_bytes = _Unclosable(), _Unclosable()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", write_through=True)
    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_cwd = os.getcwd()
    saved_term = signal.getsignal(signal.SIGTERM)
    saved_alarm = signal.signal(signal.SIGALRM, _alarm)
    status: int | None = None
    escaped = None
    would_run = hung = False
    try:
        os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        sys.stdout, sys.stderr = out, err
        signal.alarm(CASE_LIMIT_S)
        try:
            status = cli.main(list(argv))
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 2
        except WouldRun:
            would_run = True
        except _Hang:
            hung = True
        except BaseException:
            escaped = traceback.format_exc()
        finally:
            signal.alarm(0)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        signal.signal(signal.SIGTERM, saved_term)
        signal.signal(signal.SIGALRM, saved_alarm)
    return Outcome(
        tuple(argv),
        status,
        out_bytes.getvalue().decode("utf-8", "replace"),
        err_bytes.getvalue().decode("utf-8", "replace"),
        escaped,
        would_run,
        hung,
    )


@contextlib.contextmanager
def kernels_never_run() -> Iterator[None]:
    """`perfdsl run` as far as the point where it would execute kernels, and no further.

    A real run takes half a minute and starts worker processes; the fuzzer's
    runs are the session's quick runs (tests/conftest.py). Everything `run`
    decides before that (the study checks, the target is declared and usable,
    the plan is made, the shapes and flags are valid) is exercised here.
    """
    from perfdsl.runtime import execute

    def refuse(*args: object, **kwargs: object) -> None:
        raise WouldRun()

    original = execute.execute
    execute.execute = refuse
    try:
        yield
    finally:
        execute.execute = original


# --- files and trees ---------------------------------------------------------------------------


def tree_digest(root: Path) -> str:
    """SHA-256 over every path and file's bytes under `root`: equal digests, equal trees."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
        digest.update(b"\1")
    return digest.hexdigest()


def reseal(bundle: Path) -> None:
    """Rewrite the manifest to match the files as they are now (as a writer with a bug would)."""
    from perfdsl.bundle.files import MANIFEST, _inventory, dumps

    manifest_path = bundle / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    if not isinstance(manifest, dict):
        manifest = {}
    manifest.setdefault("run_id", bundle.name)
    manifest["files"] = _inventory(bundle)
    manifest_path.write_text(dumps(manifest), encoding="utf-8")


def mutate_text(rng: random.Random, text: str, edits: int | None = None) -> str:
    """Text edited as people edit studies: tokens and lines deleted, duplicated, swapped, inserted."""
    for _ in range(rng.randint(1, 4) if edits is None else edits):
        pieces = text.splitlines(keepends=True) if rng.random() < 0.4 else TOKEN.findall(text)
        if not pieces:
            return rng.choice(ODD_TEXT)
        i, j = rng.randrange(len(pieces)), rng.randrange(len(pieces))
        operation = rng.choice([*EDITS, "number"])
        numbers = [k for k, p in enumerate(pieces) if p[:1].isdigit()]
        if operation == "number" and numbers:
            pieces[rng.choice(numbers)] = rng.choice(ODD_NUMBERS)
        elif operation != "number":
            edit(pieces, operation, i, j, rng.choice([*ODD_TEXT, chr(rng.randrange(32, 12288))]))
        text = "".join(pieces)
    return text


EDITS = ("delete", "duplicate", "swap", "insert")


def edit(pieces: list[str], operation: str, i: int, j: int, inserted: str) -> None:
    """One of EDITS on a text cut into tokens or lines: piece i deleted, copied to j, swapped with j,
    or `inserted` put before it."""
    if operation == "delete":
        del pieces[i]
    elif operation == "duplicate":
        pieces.insert(j, pieces[i])
    elif operation == "swap":
        pieces[i], pieces[j] = pieces[j], pieces[i]
    else:
        pieces.insert(i, inserted)


def _json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += _json_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths += _json_paths(item, (*prefix, index))
    return paths


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value[path[0]] = _set(value[path[0]], path[1:], new)
    return value


def mutate_json(rng: random.Random, text: str) -> str:
    """One value of a JSON document replaced, a key removed or added, or its syntax broken."""
    try:
        data = json.loads(text)
    except ValueError:
        return text[: rng.randrange(len(text) + 1)]
    choice = rng.random()
    if choice < 0.1:
        cut = rng.randrange(max(1, len(text)))
        return text[:cut] + rng.choice(["", "}", ",", "\x00", "é"]) + text[cut + 1 :]
    paths = _json_paths(data)
    path = rng.choice(paths)
    if choice < 0.25 and path:
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    elif choice < 0.3:
        schema_holders = [p for p in paths if p and p[-1] == "schema"]
        data = _set(data, rng.choice(schema_holders) if schema_holders else path, rng.choice(SCHEMAS))
    elif choice < 0.35 and isinstance(data, dict):
        data[rng.choice(["extra", "schema", "files", "operations"])] = rng.choice(ODD_VALUES)
    else:
        current = _get(data, path)
        if isinstance(current, (int, float)) and not isinstance(current, bool) and rng.random() < 0.5:
            new: Any = rng.choice([-current, current * 1e12, current + 0.5, 0, math.nan, -1])
        else:
            new = rng.choice(ODD_VALUES)
        data = _set(data, path, new)
    return json.dumps(data, indent=1)


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def mutate_csv(rng: random.Random, text: str) -> str:
    """Rows dropped, duplicated, garbled or given an extra column; the header changed."""
    lines = text.splitlines()
    if not lines:
        return rng.choice(["", "\n", "a,b\n", "arm,block\nx"])
    operation = rng.choice(["drop", "duplicate", "garble", "widen", "header", "narrow", "empty_rows"])
    i = rng.randrange(len(lines))
    if operation == "drop":
        lines = [line for k, line in enumerate(lines) if k == 0 or rng.random() < 0.5]
    elif operation == "duplicate":
        lines.insert(i, lines[i])
    elif operation == "garble":
        cells = lines[i].split(",")
        cells[rng.randrange(len(cells))] = str(
            rng.choice(["", "x", "-5", "1e999", "nan", "inf", "é", '"', "0.5"])
        )
        lines[i] = ",".join(cells)
    elif operation == "widen":
        lines[i] += ",extra"
    elif operation == "narrow":
        lines[i] = ",".join(lines[i].split(",")[:-1])
    elif operation == "header":
        cells = lines[0].split(",")
        cells[rng.randrange(len(cells))] = rng.choice(["", "renamed", cells[0]])
        lines[0] = ",".join(cells)
    else:
        lines = lines[:1]
    return "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")


def mutate_file(rng: random.Random, path: Path) -> str:
    """One mutation of one file, by its kind; returns what was done."""
    if path.suffix == ".json" and rng.random() < 0.8:
        path.write_text(
            mutate_json(rng, path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8"
        )
        return "json"
    if path.suffix == ".csv" and rng.random() < 0.8:
        path.write_text(mutate_csv(rng, path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
        return "csv"
    if path.suffix == ".perf" and rng.random() < 0.8:
        path.write_text(
            mutate_text(rng, path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8"
        )
        return "text"
    operation = rng.choice(["delete", "truncate", "duplicate", "empty", "binary", "directory"])
    data = path.read_bytes()
    if operation == "delete":
        path.unlink()
    elif operation == "truncate":
        path.write_bytes(data[: rng.randrange(len(data) + 1)])
    elif operation == "duplicate":
        shutil.copy(path, path.with_name(f"copy-{path.name}"))
    elif operation == "empty":
        path.write_bytes(b"")
    elif operation == "binary":
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))))
    else:
        path.unlink()
        path.mkdir()
    return operation


def mutate_bundle(rng: random.Random, bundle: Path) -> list[str]:
    """Mutate a copied bundle in place; sealed again unless the manifest itself is the target."""
    done = []
    for _ in range(rng.randint(1, 3)):
        files = sorted(p for p in bundle.rglob("*") if p.is_file())
        if not files:
            break
        manifest = bundle / "manifest.json"
        if manifest.is_file() and rng.random() < 0.1:
            done.append("manifest " + mutate_file(rng, manifest))
            return done
        # Most mutations hit the files the evaluation reads most.
        weighted = [p for p in files if p.name != "manifest.json"]
        read_first = ("results.json", "plan.json", "study.perf", "evaluation.json", "imported.json")
        weighted += [p for p in weighted if p.name in read_first] * 3
        weighted += [p for p in weighted if p.suffix == ".csv"]
        if not weighted:
            break
        target = rng.choice(weighted)
        done.append(f"{target.relative_to(bundle)} {mutate_file(rng, target)}")
    if rng.random() < 0.85:
        reseal(bundle)
        done.append("resealed")
    return done


def copy_bundle(bundle: Path, to: Path) -> Path:
    """A copy at `to/<study>/<run id>`, as a run lays bundles out."""
    return Path(shutil.copytree(bundle, to / bundle.parent.name / bundle.name, symlinks=True))


# --- language server frames --------------------------------------------------------------------


def frame(body: bytes | dict[str, Any], length: int | None = None) -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return f"Content-Length: {len(data) if length is None else length}\r\n\r\n".encode() + data


def lsp_session(rng: random.Random, uri: str, texts: Callable[[], str]) -> bytes:
    """A byte stream an editor (or a broken one) might send: valid requests, odd ones, broken frames."""
    frames = []
    ids = iter(range(1, 10_000))
    if rng.random() < 0.9:
        frames.append(
            frame({"jsonrpc": "2.0", "id": next(ids), "method": "initialize", "params": {"capabilities": {}}})
        )
        frames.append(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    for _ in range(rng.randint(0, 8)):
        kind = rng.choice(["open", "change", "hover", "completion", "definition", "close", "odd", "broken"])
        position = {
            "line": rng.choice([0, 1, 5, 40, 10**6, -1]),
            "character": rng.choice([0, 2, 30, 10**6, -1]),
        }
        document = {"uri": rng.choice([uri, uri, "file:///nonexistent/x.perf", "untitled:1", "", "%%%"])}
        if kind == "open":
            params: Any = {"textDocument": {**document, "languageId": "perf", "version": 1, "text": texts()}}
            frames.append(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": params}))
        elif kind == "change":
            change: dict[str, Any] = {"text": texts()}
            if rng.random() < 0.5:
                change["range"] = {"start": position, "end": {"line": position["line"], "character": 0}}
                change["text"] = rng.choice(ODD_TEXT)
            params = {"textDocument": {**document, "version": rng.randint(-1, 9)}, "contentChanges": [change]}
            frames.append(frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}))
        elif kind in ("hover", "completion", "definition"):
            method = f"textDocument/{kind}"
            frames.append(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "id": next(ids),
                        "method": method,
                        "params": {"textDocument": document, "position": position},
                    }
                )
            )
        elif kind == "close":
            frames.append(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "method": "textDocument/didClose",
                        "params": {"textDocument": document},
                    }
                )
            )
        elif kind == "odd":
            frames.append(
                frame(
                    rng.choice(
                        [
                            {"jsonrpc": "2.0", "id": next(ids), "method": "no/such/method", "params": {}},
                            {
                                "jsonrpc": "2.0",
                                "id": next(ids),
                                "method": "textDocument/hover",
                                "params": rng.choice(ODD_VALUES),
                            },
                            {
                                "jsonrpc": "2.0",
                                "method": "textDocument/didOpen",
                                "params": {"textDocument": rng.choice(ODD_VALUES)},
                            },
                            {"jsonrpc": "1.0", "id": "x", "method": "initialize"},
                            {"id": next(ids)},
                            rng.choice(ODD_VALUES),
                        ]
                    )
                )
            )
        else:
            frames.append(
                rng.choice(
                    [
                        frame(b"{not json"),
                        frame(b"\xff\xfe\x00"),
                        frame(b'{"jsonrpc": "2.0"}', length=3),
                        b"Content-Length: x\r\n\r\n{}",
                        b"garbage without a header\r\n",
                        b"Content-Length: 99999\r\n\r\n{}",
                    ]
                )
            )
    if rng.random() < 0.7:
        frames.append(frame({"jsonrpc": "2.0", "id": next(ids), "method": "shutdown"}))
    if rng.random() < 0.7:
        frames.append(frame({"jsonrpc": "2.0", "method": "exit"}))
    return b"".join(frames)
