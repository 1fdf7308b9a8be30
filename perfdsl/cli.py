"""The `perfdsl` command line: argument parsing and exit statuses.

Each subcommand lives in its own module under `perfdsl.commands` and is
imported only when it runs, so `perfdsl check` never pays for numba or
WeasyPrint. Exit statuses: 0 clean (warnings allowed), 1 the study or its
evidence has errors, 2 the command could not run. A user error is a one-line
message on stderr, never a traceback. A reader that closes the output early
(`perfdsl check x.perf | head -1`) changes none of this: the rest of the output
is dropped and the command still ends with the status its result warrants.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import TextIO

from perfdsl import __version__
from perfdsl.commands import CommandError

# subcommand -> (module under perfdsl.commands, one-line help)
_COMMANDS = {
    "check": ("check", "check that a study's chain of evidence is complete and consistent"),
    "explain": ("explain", "explain a diagnostic code"),
    "run": ("run", "run a study's kernels and collect the evidence into a bundle"),
    "verify": ("verify", "recheck a bundle's files against its manifest"),
    "evaluate": ("evaluate", "turn a bundle's raw samples into verdicts (evaluation.json)"),
    "compare": ("compare", "compare two runs of one study: environment differences, then every ratio"),
    "history": ("history", "write one static HTML page of every run of a study over time and commit"),
    "matrix": ("matrix", "run a study over machines, environments and shapes, locally or on Slurm"),
    "build": ("build", "compile a study and its evidence into a report (PDF, HTML or Markdown)"),
    "new": ("new", "write a study and its kernel module to start from, in the current directory"),
    "lsp": ("lsp", "serve diagnostics, hover, completion and definitions to an editor (stdio)"),
}


def _parser(command: str | None) -> argparse.ArgumentParser:
    """The parser, with the arguments of `command` only: the other commands' modules stay unimported.

    Importing every command to declare its arguments cost `perfdsl check` the bundle and
    report records that `evaluate` and `build` import (about 0.15 s of a 0.3 s start).
    Every command is still listed, with its help line, by `perfdsl --help`."""
    parser = argparse.ArgumentParser(
        prog="perfdsl",
        description="Performance diagnosis studies as programs.",
    )
    parser.add_argument("--version", action="version", version=f"perfdsl {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, help_text) in _COMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if name == command:
            importlib.import_module(f"perfdsl.commands.{module}").add_arguments(sub)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names: its first word that is not an option (the global options
    take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


class _ClosedPipeSafe:
    """Standard output that drops what it is given once the reader has gone.

    Without it a closed pipe raises BrokenPipeError wherever the command happens
    to be printing, and the status the result warrants (1 for errors found) is
    lost with the exception. On the first EPIPE the descriptor is pointed at
    /dev/null, as Python's documentation advises, so the bytes still buffered
    and everything printed later go nowhere, and the command runs to its end.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop_output()
            return len(text)
        except OSError as error:  # a full disk or device: the output is lost, not the reader
            raise OutputLost(error) from None

    def flush(self) -> None:
        # A command may close standard output itself (the language server does
        # on `exit`): nothing is left to flush then.
        if self._stream.closed:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop_output()
        except OSError as error:
            raise OutputLost(error) from None

    def _drop_output(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


class OutputLost(Exception):
    """Standard output could not take what the command wrote (`>/dev/full`): the command did not
    deliver its result, which is its failure to run (status 2), not an error found (1)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))


def _usable_standard_streams() -> None:
    """Standard streams a command can always write to.

    Started with a stream closed (`>&-`), Python holds None for it, and the first
    print raised AttributeError after the work was done, with status 1. Such a stream
    is /dev/null here. And where its encoding cannot spell what perfdsl prints (`µs`
    under PYTHONIOENCODING=ascii), a character is replaced rather than the command
    ending in UnicodeEncodeError.
    """
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 (open for the process)
        elif name == "stdout" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so it unwinds as an interrupt does.

    Python's default for SIGTERM is to die at once: no `finally` runs, so a run
    would leave its measuring workers behind and its staging directory on disk.
    Raised instead, it takes SIGINT's path: workers are asked to stop, the
    staging directory is removed, and nothing half-written is kept.
    """


_ONE_SHOT = frozenset({"check"})
"""Commands whose process reads, reports and ends, and that keep the cyclic collector off
throughout when run as a process: the check builds many small objects that stay alive to the
end and form no reference cycle, and each collection only rescans them. Paused around each
study alone (`commands.check`), it came back on after the study, and the next allocation
collected every object the check had built: 0.3 s of a 20,000-line study's 2.3 s, to free
nothing. Off, it also skips the collection at exit. Called in-process (`main(argv)`, as the
tests and the language server do), the collector is left as it was."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    words = sys.argv[1:] if argv is None else list(argv)
    if argv is None:
        _usable_standard_streams()  # first: argparse and every refusal below print too
    args = _parser(_command(words)).parse_args(words)
    try:
        os.getcwd()
    except OSError:  # removed while a shell stood in it: every relative path would fail
        print(
            f"perfdsl {args.command}: error: the current directory no longer exists; "
            "cd to one that does and run the command again",
            file=sys.stderr,
        )
        return 2
    if argv is None and args.command in _ONE_SHOT:
        gc.disable()
    signal.signal(signal.SIGTERM, _terminate)
    module = importlib.import_module(f"perfdsl.commands.{_COMMANDS[args.command][0]}")
    stdout = sys.stdout
    if not isinstance(stdout, _ClosedPipeSafe):
        sys.stdout = _ClosedPipeSafe(stdout)
    try:
        status = module.run(args)
        sys.stdout.flush()
        return status
    except CommandError as error:
        print(f"perfdsl {args.command}: error: {error}", file=sys.stderr)
        return 2
    except OutputLost as error:
        print(f"perfdsl {args.command}: error: cannot write standard output: {error}", file=sys.stderr)
        return 2
    except Terminated:
        print(f"perfdsl {args.command}: terminated; nothing half-written was kept", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print(f"perfdsl {args.command}: interrupted; nothing half-written was kept", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout
