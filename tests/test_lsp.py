"""`perfdsl lsp` through a real LSP session: a pygls client talking to the server over pipes.

The server is the command line itself (`python -m perfdsl lsp` in a child
process), so these tests cover the wiring, the JSON-RPC encoding and the
answers together, as an editor would see them.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path
from run_support import environment

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "check_cases" / "PD004_unknown_setting.perf"
TIMEOUT_S = 60
Body = Callable[[LanguageClient, str, "asyncio.Queue[Any]"], Awaitable[Any]]


async def _session(
    text: str, body: Callable[[LanguageClient, str, asyncio.Queue[Any]], Awaitable[Any]]
) -> Any:
    """Start the server, open `text` as BROKEN's URI, run `body`, shut the server down."""
    client = LanguageClient("perfdsl-test", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(sys.executable, "-m", "perfdsl", "lsp", env=environment(), cwd=str(ROOT))
    try:
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=from_fs_path(str(ROOT)))
        )
        client.initialized(types.InitializedParams())
        uri = from_fs_path(str(BROKEN))
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="perf", version=1, text=text)
            )
        )
        return await asyncio.wait_for(body(client, uri, published), TIMEOUT_S)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def _run(text: str, body: Body) -> Any:
    return asyncio.run(_session(text, body))


def _corners(diagnostic: types.Diagnostic) -> tuple[int, int, int, int]:
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def test_open_broken_study_publishes_codes_and_ranges() -> None:
    async def body(client: LanguageClient, uri: str, published: asyncio.Queue[Any]) -> Any:
        return await published.get()

    params = _run(BROKEN.read_text(encoding="utf-8"), body)
    found = {(d.code, _corners(d)) for d in params.diagnostics}
    # The golden short form says 46:26 (1-based); LSP counts from 0. One typo is one error:
    # `warmpu` is read as `warmup`, so no "no warm-up" follows it.
    assert found == {("PD004", (45, 25, 45, 31))}
    typo = next(d for d in params.diagnostics if d.code == "PD004")
    assert typo.severity == types.DiagnosticSeverity.Error
    assert "help: did you mean `warmup`?" in typo.message


def test_fixing_the_typo_clears_the_diagnostics() -> None:
    text = BROKEN.read_text(encoding="utf-8")

    async def body(client: LanguageClient, uri: str, published: asyncio.Queue[Any]) -> Any:
        first = await published.get()
        start = text.index("warmpu")
        line = text.count("\n", 0, start)
        character = start - (text.rfind("\n", 0, start) + 1)
        edit = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=line, character=character),
                end=types.Position(line=line, character=character + len("warmpu")),
            ),
            text="warmup",
        )
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[edit],
            )
        )
        return first, await published.get()

    first, second = _run(text, body)
    assert len(first.diagnostics) == 1
    assert second.version == 2
    assert list(second.diagnostics) == []


def test_hover_over_a_diagnostic_explains_its_code() -> None:
    async def body(client: LanguageClient, uri: str, published: asyncio.Queue[Any]) -> Any:
        await published.get()
        on_typo = types.Position(line=45, character=27)
        elsewhere = types.Position(line=0, character=2)
        document = types.TextDocumentIdentifier(uri=uri)
        return (
            await client.text_document_hover_async(
                types.HoverParams(text_document=document, position=on_typo)
            ),
            await client.text_document_hover_async(
                types.HoverParams(text_document=document, position=elsewhere)
            ),
        )

    on_typo, elsewhere = _run(BROKEN.read_text(encoding="utf-8"), body)
    assert "PD004 (error): unknown section or setting" in on_typo.contents.value
    assert "A study that satisfies it" in on_typo.contents.value
    assert elsewhere is None


def test_hover_over_a_written_code() -> None:
    text = BROKEN.read_text(encoding="utf-8").replace(
        "study unknown_setting {", "study unknown_setting { # PD203"
    )

    async def body(client: LanguageClient, uri: str, published: asyncio.Queue[Any]) -> Any:
        await published.get()
        position = types.Position(line=0, character=text.index("PD203") + 2)
        params = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
        return await client.text_document_hover_async(params)

    assert "PD203 (error)" in _run(text, body).contents.value


def test_completion_offers_settings_names_and_quantities() -> None:
    text = BROKEN.read_text(encoding="utf-8")
    timing_line = 45
    predict_line = next(i for i, line in enumerate(text.splitlines()) if "normalize.bytes" in line)

    async def body(client: LanguageClient, uri: str, published: asyncio.Queue[Any]) -> Any:
        await published.get()
        document = types.TextDocumentIdentifier(uri=uri)
        in_timing = types.CompletionParams(
            text_document=document, position=types.Position(line=timing_line, character=25)
        )
        after_dot = types.CompletionParams(
            text_document=document,
            position=types.Position(line=predict_line, character=len("    normalize.")),
        )
        return (
            await client.text_document_completion_async(in_timing),
            await client.text_document_completion_async(after_dot),
        )

    in_timing, after_dot = _run(text, body)
    labels = {item.label: item for item in in_timing.items}
    assert {"warmup", "repeats", "rotate", "confidence"} <= set(labels)
    assert labels["warmup"].kind == types.CompletionItemKind.Property
    assert "seeds" not in labels  # a correctness setting, not a timing one
    assert {"normalize", "decode_step"} <= set(labels)
    assert labels["normalize"].kind == types.CompletionItemKind.Reference
    assert {"bytes_removed", "float32", "evidence"} <= set(labels)
    quantities = {item.label for item in after_dot.items}
    assert {"time", "bytes", "launches", "bandwidth", "static"} <= quantities
    assert "throughput" not in quantities  # an application's quantity, not an operation's


def test_definition_of_a_used_name() -> None:
    text = BROKEN.read_text(encoding="utf-8")
    uses_line = next(i for i, line in enumerate(text.splitlines()) if line.strip().startswith("uses"))
    declared_line = next(
        i for i, line in enumerate(text.splitlines()) if line.startswith("  operation normalize")
    )

    async def body(client: LanguageClient, uri: str, published: asyncio.Queue[Any]) -> Any:
        await published.get()
        position = types.Position(
            line=uses_line, character=text.splitlines()[uses_line].index("normalize") + 3
        )
        params = types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position
        )
        return uri, await client.text_document_definition_async(params)

    uri, location = _run(text, body)
    assert location.uri == uri
    start = len("  operation ")
    assert _corners_of(location.range) == (declared_line, start, declared_line, start + len("normalize"))


def _corners_of(r: types.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _messages(stream: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a server's framed output."""
    found = []
    while stream:
        header, _, rest = stream.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        found.append(json.loads(rest[:length]))
        stream = rest[length:]
    return found


def _over_pipes(messages: list[dict[str, Any]]) -> subprocess.CompletedProcess[bytes]:
    """Send `messages` to a fresh server over raw pipes, as an editor frames them, and wait for it
    to end."""
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", "lsp"],
        input=b"".join(map(_frame, messages)),
        env=environment(),
        cwd=str(ROOT),
        capture_output=True,
        timeout=TIMEOUT_S,
    )


INITIALIZE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
]


def _end_session(*methods: str) -> subprocess.CompletedProcess[bytes]:
    """Initialize the server over raw pipes, send `methods` in order, and wait for it to end."""
    messages = list(INITIALIZE)
    for number, method in enumerate(methods, start=2):
        request = {"jsonrpc": "2.0", "method": method}
        messages.append({**request, "id": number} if method == "shutdown" else request)
    return _over_pipes(messages)


def test_shutdown_then_exit_ends_with_status_0_and_nothing_on_stderr() -> None:
    """LSP: the exit status is 0 when `shutdown` came before `exit`; an editor logs anything else."""
    done = _end_session("shutdown", "exit")
    assert done.stderr.decode() == ""
    assert done.returncode == 0
    assert {"jsonrpc": "2.0", "id": 2, "result": None} in _messages(done.stdout)


def test_exit_without_shutdown_ends_with_status_1() -> None:
    done = _end_session("exit")
    assert done.stderr.decode() == ""
    assert done.returncode == 1


def test_a_request_before_initialize_is_answered_server_not_initialized() -> None:
    """LSP: -32002 before `initialize`; the server answered -32603 with a Python traceback."""
    uri = (ROOT / "studies" / "planted_null.perf").as_uri()
    messages = [
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "perf", "version": 1, "text": "study {"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    done = _over_pipes(messages)
    replies = {m.get("id"): m for m in _messages(done.stdout)}
    assert replies[1]["error"]["code"] == -32002
    assert "Traceback" not in json.dumps(replies[1]) and "traceback" not in json.dumps(replies[1])
    assert "result" in replies[2] and done.returncode == 0
    # The notification before `initialize` was dropped, not published.
    assert not any(m.get("method") == "textDocument/publishDiagnostics" for m in _messages(done.stdout))


def test_a_study_with_bare_cr_line_ends_gets_check_s_diagnostics(tmp_path: Path) -> None:
    """The server read a study saved with CRs as one line: one PD001 where check found others."""
    text = (ROOT / "tests" / "check_cases" / "PD004_unknown_setting.perf").read_text(encoding="utf-8")
    path = tmp_path / "cr.perf"
    path.write_bytes(text.replace("\n", "\r").encode("utf-8"))
    checked = subprocess.run(
        [sys.executable, "-m", "perfdsl", "check", "--format", "json", str(path)],
        env=environment(),
        cwd=str(ROOT),
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    expected = [(d["code"], d["span"]["start"]["line"] - 1) for d in json.loads(checked.stdout)]
    uri = path.as_uri()
    messages = [
        *INITIALIZE,
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": uri,
                    "languageId": "perf",
                    "version": 1,
                    "text": path.read_bytes().decode("utf-8"),
                }
            },
        },
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    done = _over_pipes(messages)
    (published,) = [m for m in _messages(done.stdout) if m.get("method") == "textDocument/publishDiagnostics"]
    found = [(d["code"], d["range"]["start"]["line"]) for d in published["params"]["diagnostics"]]
    assert expected and found == expected
