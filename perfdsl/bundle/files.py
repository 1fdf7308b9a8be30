"""The results bundle: one directory per run, written atomically, with a manifest.

Layout: `<artifacts>/<study>/<run-id>/`. A run writes into the sibling
`<artifacts>/<study>/.tmp-<run-id>/` and renames it into place only when every
file and the manifest are written and flushed to disk; `rename` within one
directory is atomic, so a reader sees either no bundle or a whole one.

* An exception (KeyboardInterrupt from SIGINT included) inside the writer
  removes the temporary directory and propagates.
* A SIGKILL'd run (or a power cut) cannot clean up: it leaves a `.tmp-*`
  directory, which is never a bundle: `latest_bundle` skips it and
  `verify_bundle` rejects it. The next writer for the same study removes it if
  its owner is gone: the directory holds an `.owner` file with the writing
  host and pid, and a temporary directory is stale when that pid is not alive
  on this host, or, from another host or without an owner file, when it is
  older than STALE_AFTER_S. The owner file is deleted before the rename, so it
  never reaches a bundle.

Run ids are `YYYYMMDDTHHMMSSZ-<6 hex>` in UTC: names sort by start time (runs
started in the same second sort in random order). Nothing is written outside
the bundle's own directory: relative paths are checked before every write.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import math
import os
import re
import secrets
import shutil
import socket
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs
import numpy as np

from perfdsl.atomic import replacing, temporary_of

MANIFEST = "manifest.json"
OWNER = ".owner"
TMP_PREFIX = ".tmp-"
STALE_AFTER_S = 24 * 3600
"""A temporary directory whose owner cannot be checked is stale after a day."""
RUN_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")


class BundleError(Exception):
    """A write the bundle refuses: a path outside it, a reserved name, a duplicate."""


def new_run_id(now: dt.datetime | None = None) -> str:
    """A run id that sorts by start time: `20261129T113000Z-1a2b3c`."""
    now = now or dt.datetime.now(dt.UTC)
    return f"{now.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


class BundleWriter:
    """Write one run's bundle; use as a context manager.

    On a clean exit the manifest is written last and the directory renamed into
    place (`self.path`); on any exception the temporary directory is removed.
    """

    def __init__(self, artifacts: Path, study: str, run_id: str | None = None) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", study) or study.startswith("."):
            raise BundleError(f"study name `{study}` cannot name a directory")
        self.run_id = run_id or new_run_id()
        if not RUN_ID.match(self.run_id):
            raise BundleError(f"run id `{self.run_id}` is not of the form {RUN_ID.pattern}")
        self.study_dir = Path(artifacts) / study
        self.tmp = self.study_dir / f"{TMP_PREFIX}{self.run_id}"
        self.path = self.study_dir / self.run_id
        self._written: set[str] = set()

    def __enter__(self) -> BundleWriter:
        self.study_dir.mkdir(parents=True, exist_ok=True)
        remove_stale(self.study_dir)
        if self.path.exists():
            raise BundleError(f"bundle `{self.path}` already exists")
        if self.tmp.exists():
            raise BundleError(f"`{self.tmp}` already exists")
        # An interrupt between the directory and the `with` body reaches no __exit__: a SIGINT
        # sent as soon as the directory appeared left it behind, in one run of many, and a
        # SIGTERM did still, raised as the mkdir call returned, before a `try` after it began.
        try:
            self.tmp.mkdir()
            (self.tmp / OWNER).write_text(f"{socket.gethostname()} {os.getpid()}\n")
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return
        try:
            self._commit()
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise

    def write_bytes(self, relpath: str, data: bytes) -> Path:
        """Write one file into the bundle, flushed to disk."""
        target = self._target(relpath)
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        self._written.add(relpath)
        return target

    def write_text(self, relpath: str, text: str) -> Path:
        """Write a UTF-8 text file."""
        return self.write_bytes(relpath, text.encode("utf-8"))

    def write_json(self, relpath: str, value: Any) -> Path:
        """Write JSON with sorted keys; attrs records, numpy values and paths are converted."""
        return self.write_text(relpath, dumps(value))

    def write_csv(self, relpath: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
        """Write a CSV file: a header row, then one row per record."""
        buffer = io.StringIO()
        out = csv.writer(buffer, lineterminator="\n")
        out.writerow(header)
        out.writerows(rows)
        return self.write_text(relpath, buffer.getvalue())

    def _target(self, relpath: str) -> Path:
        """Where `relpath` goes, refusing anything that would land outside the bundle."""
        _check_relpath(relpath)
        if relpath in self._written:
            raise BundleError(f"`{relpath}` was already written")
        if not self.tmp.is_dir():
            raise BundleError("the bundle is not open: use `with BundleWriter(...) as bundle`")
        target = (self.tmp / relpath).resolve()
        if not target.is_relative_to(self.tmp.resolve()):
            raise BundleError(f"`{relpath}` resolves outside the bundle")
        return target

    def _commit(self) -> None:
        (self.tmp / OWNER).unlink()
        manifest = {"run_id": self.run_id, "files": _inventory(self.tmp)}
        with open(self.tmp / MANIFEST, "x", encoding="utf-8") as handle:
            handle.write(dumps(manifest))
            handle.flush()
            os.fsync(handle.fileno())
        _fsync_dir(self.tmp)
        os.rename(self.tmp, self.path)
        _fsync_dir(self.study_dir)


def _check_relpath(relpath: str) -> None:
    """Refuse a path that is absolute, climbs out, or names the manifest or owner file."""
    parts = Path(relpath).parts
    if (
        not parts
        or Path(relpath).is_absolute()
        or any(p in ("..", ".") for p in parts)
        or relpath in (MANIFEST, OWNER)
        or "\\" in relpath
    ):
        raise BundleError(f"`{relpath}` is not a plain relative path inside the bundle")


def dumps(value: Any) -> str:
    """JSON with sorted keys and no NaN (strict JSON readers reject it)."""
    return json.dumps(value, sort_keys=True, indent=2, allow_nan=False, default=_plain) + "\n"


def loads(text: str) -> Any:
    """JSON as `dumps` writes it: NaN, Infinity and numbers too large for a float are refused
    (ValueError), so whatever is read can be written back."""

    def finite(literal: str) -> float:
        number = float(literal)
        if not math.isfinite(number):
            raise ValueError(f"{literal} is not a finite number")
        return number

    def refused(literal: str) -> float:
        raise ValueError(f"{literal} is not JSON")

    try:
        return json.loads(text, parse_float=finite, parse_constant=refused)
    except RecursionError:
        # `[[[[...` 100,000 deep ended every reader of a bundle in a RecursionError traceback.
        raise ValueError("nested deeper than any file a run writes") from None


def _plain(value: Any) -> Any:
    if attrs.has(type(value)):
        return attrs.asdict(value, recurse=False)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


def _inventory(root: Path) -> dict[str, dict[str, Any]]:
    """SHA-256 and size of every file under `root` but the manifest, by relative path.

    Left out too: the temporaries of a replacement of a top-level file (the manifest,
    evaluation.json) that a killed `perfdsl evaluate` left; they never became bundle
    files, nothing reads them, and `replace_file` removes them.
    """
    return {
        rel: {"sha256": _sha256(root / rel), "size": (root / rel).stat().st_size}
        for rel in _bundle_files(root)
    }


def _bundle_files(root: Path) -> list[str]:
    """The bundle's files (and links) but its manifest and a replacement's temporaries, sorted,
    relative to `root`: named, never opened."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if rel != MANIFEST and not (path.parent == root and temporary_of(path.name)):
            found.append(rel)
    return found


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def not_a_bundle(path: Path) -> str | None:
    """Why `path` is no bundle directory, in words that say what to give instead; None when it
    is a directory with a manifest (whether the manifest holds is `verify_bundle`'s question).

    "no such bundle directory" was said of a study file that exists, and a directory of
    bundles (`artifacts/<study>`) failed verification like a tampered bundle.
    """
    try:
        return _not_a_bundle(path)
    except PermissionError as error:
        return f"cannot be read: {error.strerror} (this user may not look into it)"


def _not_a_bundle(path: Path) -> str | None:
    if not path.exists():
        return "no such bundle directory"
    if not path.is_dir():
        return (
            "is a file, not a bundle directory: give the directory `perfdsl run` printed "
            "(artifacts/<study>/<run id>)"
        )
    if not (path / MANIFEST).exists():
        inside = sorted(p.name for p in path.iterdir() if (p / MANIFEST).is_file())
        count = f"{len(inside)} bundle{'s' if len(inside) != 1 else ''}"
        where = f" (it holds {count}, the newest {inside[-1]})" if inside else ""
        return f"is a directory without a {MANIFEST}: not a bundle{where}"
    return None


def verify_bundle(path: Path) -> list[str]:
    """Recheck a bundle against its manifest; an empty list means it is intact."""
    path = Path(path)
    if path.name.startswith(TMP_PREFIX):
        return [f"`{path}` is an unfinished run's temporary directory, not a bundle"]
    if not path.is_dir():
        return [f"`{path}` is not a directory"]
    try:
        manifest = loads((path / MANIFEST).read_text(encoding="utf-8"))
        listed: dict[str, dict[str, Any]] = manifest["files"]
    except FileNotFoundError:
        return [f"`{MANIFEST}` is missing"]
    except (ValueError, KeyError, TypeError) as error:
        return [f"`{MANIFEST}` is unreadable: {error}"]
    except OSError as error:
        return [f"`{MANIFEST}` is unreadable: {error.strerror or error}"]
    if not isinstance(listed, dict) or not all(isinstance(entry, dict) for entry in listed.values()):
        return [f"`{MANIFEST}` is unreadable: `files` is not an object of {{sha256, size}} entries"]
    problems = []
    for rel, entry in sorted(listed.items()):
        file = path / rel
        if file.is_symlink() or (file.exists() and not file.is_file()):
            # A link to /dev/zero was hashed forever, and one to a folder raised IsADirectoryError.
            problems.append(f"`{rel}` is not a regular file (a link, folder or device), as no run writes one")
        elif not file.is_file():
            problems.append(f"`{rel}` is missing")
        else:
            try:
                changed = file.stat().st_size != entry.get("size") or _sha256(file) != entry.get("sha256")
            except OSError as error:
                problems.append(f"`{rel}` cannot be read: {error.strerror or error}")
                continue
            if changed:
                problems.append(f"`{rel}` has changed since the run")
    for rel in sorted(_bundle_files(path)):
        if rel not in listed:
            problems.append(f"`{rel}` is not in the manifest")
    return problems


def replace_file(path: Path, relpath: str, data: bytes) -> Path:
    """Add or replace one file of a finished bundle and rewrite its manifest.

    The bundle must verify first, except for `relpath` itself (a derived file
    such as evaluation.json, which a crash between the two renames below could
    leave out of step; rewriting it repairs that). The file, then the manifest,
    are each written to a temporary name, flushed and renamed over the old one,
    so a reader never sees a half-written file.
    """
    path = Path(path)
    _check_relpath(relpath)
    problems = [p for p in verify_bundle(path) if not p.startswith(f"`{relpath}`")]
    if problems:
        raise BundleError(f"`{path}` fails verification: {'; '.join(problems)}")
    manifest = loads((path / MANIFEST).read_text(encoding="utf-8"))
    for leftover in path.iterdir():
        if temporary_of(leftover.name) in (relpath, MANIFEST):
            leftover.unlink(missing_ok=True)
    target = path / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    with replacing(target) as handle:
        handle.write(data)
    manifest["files"][relpath] = {"sha256": _sha256(target), "size": target.stat().st_size}
    with replacing(path / MANIFEST) as handle:
        handle.write(dumps(manifest).encode("utf-8"))
    _fsync_dir(path)
    return target


class RunsUnreadable(OSError):
    """The artifacts directory of a study cannot be listed: its runs cannot be found."""


def bundles(artifacts: Path, study: str) -> list[Path]:
    """Finished bundles of `study`, oldest first (temporary directories excluded).

    A run directory this user may not look into is listed (its reader says why it cannot be
    read) rather than raising PermissionError for every run beside it; one whose study
    directory cannot be listed is RunsUnreadable."""
    study_dir = Path(artifacts) / study
    if not study_dir.is_dir():
        return []
    try:
        entries = list(study_dir.iterdir())
    except OSError as error:
        raise RunsUnreadable(
            error.errno, f"cannot list the runs in it: {error.strerror}", str(study_dir)
        ) from None
    return sorted(p for p in entries if RUN_ID.match(p.name) and _finished_or_closed(p))


def _finished_or_closed(run: Path) -> bool:
    """A directory with a manifest, or one whose contents this user may not see."""
    try:
        return run.is_dir() and (run / MANIFEST).is_file()
    except PermissionError:
        return True


def latest_bundle(artifacts: Path, study: str) -> Path | None:
    """The most recent finished bundle of `study`, or None."""
    found = bundles(artifacts, study)
    return found[-1] if found else None


def remove_stale(study_dir: Path, now: float | None = None) -> list[Path]:
    """Remove temporary directories left by runs that can no longer finish; return them."""
    now = time.time() if now is None else now
    removed = []
    for tmp in sorted(study_dir.glob(f"{TMP_PREFIX}*")):
        if tmp.is_dir() and _is_stale(tmp, now):
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


def _is_stale(tmp: Path, now: float) -> bool:
    try:
        host, pid = (tmp / OWNER).read_text().split()
        if host == socket.gethostname():
            return not _alive(int(pid))
    except (OSError, ValueError):
        pass
    try:
        return now - tmp.stat().st_mtime > STALE_AFTER_S
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
