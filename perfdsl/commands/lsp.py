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
    create_server().start_io()
    return 0
