"""How long the language server takes to answer one keystroke on a bundled study.

Prints figures; it asserts nothing. What a keystroke costs the server is one
`didChange`: parse + check of the whole study and the conversion of its
diagnostics to LSP (`perfdsl.lsp.analysis.lsp_diagnostics`), in a warm process,
as in a running server. Each sample types one more character of a setting
name into the study (so half the samples carry a diagnostic, as while typing),
then the median and the 90th percentile of N samples are printed, with a
completion request's cost beside it.

The same keystrokes are then sent to `perfdsl lsp` in a child process by a real
client (full-text `didChange`), timing each from the notification until its
diagnostics arrive: what an editor waits, JSON-RPC and pipes included.

    .venv/bin/python benchmarks/lsp_keystroke.py [--samples 200] [--study studies/rmsnorm_fusion.perf]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from perfdsl.lsp.analysis import completions, lsp_diagnostics

ROOT = Path(__file__).resolve().parent.parent


def _typed(text: str, samples: int) -> list[str]:
    """The study after each keystroke of `repeats` retyped letter by letter, again and again."""
    anchor = text.index("repeats")
    word = "repeats"
    versions = []
    for i in range(samples):
        typed = word[: i % (len(word) + 1)]
        versions.append(text[:anchor] + typed + text[anchor + len(word) :])
    return versions


def _milliseconds(action: Callable[[str], object], inputs: list[str]) -> list[float]:
    times = []
    for item in inputs:
        began = time.perf_counter()
        action(item)
        times.append((time.perf_counter() - began) * 1000)
    return times


async def _roundtrip_ms(study: Path, versions: list[str]) -> list[float]:
    """didChange -> publishDiagnostics wall milliseconds for each version, through `perfdsl lsp`."""
    client = LanguageClient("perfdsl-benchmark", "1")
    arrived: asyncio.Queue[float] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(params: types.PublishDiagnosticsParams) -> None:
        arrived.put_nowait(time.perf_counter())

    await client.start_io(sys.executable, "-m", "perfdsl", "lsp", cwd=str(ROOT))
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    uri = from_fs_path(str(study.resolve()))
    text = study.read_text(encoding="utf-8")
    item = types.TextDocumentItem(uri=uri, language_id="perf", version=0, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    await arrived.get()
    times = []
    for version, text in enumerate(versions, start=1):
        began = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        times.append((await arrived.get() - began) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--study", type=Path, default=ROOT / "studies" / "rmsnorm_fusion.perf")
    args = parser.parse_args()
    text = args.study.read_text(encoding="utf-8")
    versions = _typed(text, args.samples)
    lsp_diagnostics(str(args.study), text)  # the first call builds the parser
    check_ms = _milliseconds(lambda t: lsp_diagnostics(str(args.study), t), versions)
    cursor = types.Position(line=text[: text.index("repeats")].count("\n"), character=25)
    complete_ms = _milliseconds(lambda t: completions(t, cursor), versions)
    roundtrip_ms = asyncio.run(_roundtrip_ms(args.study, versions))
    lines = text.count("\n")
    print(f"{args.study.name}: {lines} lines, {args.samples} keystrokes")
    figures = {"parse+check+convert": check_ms, "completion": complete_ms, "editor round trip": roundtrip_ms}
    for name, times in figures.items():
        median, p90 = statistics.median(times), statistics.quantiles(times, n=10)[-1]
        print(f"  {name:20s} median {median:6.2f} ms   p90 {p90:6.2f} ms   min {min(times):6.2f} ms")


if __name__ == "__main__":
    main()
