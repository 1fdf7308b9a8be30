"""`perfdsl lsp`: the language server, speaking LSP over stdin and stdout to an editor."""

from __future__ import annotations

import argparse

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
    server.start_io()
    # The exit status LSP defines: 0 after `shutdown` then `exit`, 1 for an exit
    # (or a closed stdin) without the shutdown first.
    return 0 if server.shut_down else 1
