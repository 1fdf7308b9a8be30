"""`perfdsl lsp`: the language server, speaking LSP over stdin and stdout to an editor."""

from __future__ import annotations

import argparse
import logging
import sys

from perfdsl.commands import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # stdio is the only transport editors need; nothing to configure


def run(args: argparse.Namespace) -> int:
    del args
    try:
        from perfdsl.lsp.server import create_server
    except ImportError as error:
        raise CommandError(f"`lsp` needs pygls: pip install 'perfdsl[editor]' ({error})") from None
    server = create_server()
    handler = _one_line_log()
    try:
        server.start_io()
    finally:
        logging.getLogger("pygls").removeHandler(handler)
        logging.getLogger("pygls").propagate = True
    # The exit status LSP defines: 0 after `shutdown` then `exit`, 1 for an exit
    # (or a closed stdin) without the shutdown first.
    return 0 if server.shut_down else 1


class _OneLine(logging.Formatter):
    """A log record as one line: its message, and the exception's type and text, without the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        # pygls puts a traceback into some messages themselves ("Unable to deserialize message\n...").
        message = record.getMessage().splitlines()
        line = f"perfdsl lsp: {message[0] if message else record.levelname.lower()}"
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line += f": {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        return line


def _one_line_log() -> logging.Handler:
    """pygls logs a malformed message, or a request its handler failed, with a traceback on stderr.

    The editor shows stderr as the server's log: one line says which message was
    refused and why (the client already got the JSON-RPC error), and no traceback
    reads as the server having crashed when it is still serving.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    handler.setLevel(logging.WARNING)
    logger = logging.getLogger("pygls")
    logger.addHandler(handler)
    logger.propagate = False
    return handler
