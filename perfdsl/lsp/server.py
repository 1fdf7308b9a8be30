"""The pygls wiring of `perfdsl lsp`: which LSP messages are answered, and by what.

Every answer is computed in `perfdsl.lsp.analysis`. Diagnostics are published
on open, on every change and on save: `check` never imports or runs the code a
study names, so running it on each keystroke is safe, and it takes a few
milliseconds on a bundled study (the report quotes the measured latency).
"""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from perfdsl import __version__
from perfdsl.lsp import analysis


class PerfLanguageServer(LanguageServer):
    """The server, remembering what it last published so hover can explain it.

    `shut_down` records the client's `shutdown` request: LSP's exit status is 0
    when `exit` follows one and 1 otherwise, and pygls swallows its own.
    """

    def __init__(self) -> None:
        super().__init__("perfdsl", __version__)
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.shut_down = False

    @property
    def initialized(self) -> bool:
        """Whether the client has sent `initialize` (pygls makes the workspace then)."""
        try:
            return self.workspace is not None
        except RuntimeError:
            return False

    def text(self, uri: str) -> str:
        """The document's text: the editor's copy when open, else the file's ("" if it cannot be read).

        Before `initialize` a request is answered with LSP's ServerNotInitialized (-32002), as the
        specification asks, not with pygls's internal error and a Python traceback.
        """
        if not self.initialized:
            raise JsonRpcServerNotInitialized("the client has not sent `initialize` yet")
        try:
            return as_read(self.workspace.get_text_document(uri).source)
        except (OSError, ValueError):
            # A request about a document never opened whose file is not there, or not UTF-8.
            return ""

    def publish(self, uri: str) -> None:
        """Publish the document's diagnostics; a notification before `initialize` is dropped."""
        if not self.initialized:
            return
        document = self.workspace.get_text_document(uri)
        found = analysis.lsp_diagnostics(to_fs_path(uri) or uri, as_read(document.source))
        self.published[uri] = found
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=document.version)
        )


def as_read(text: str) -> str:
    """The editor's text as `check` reads a file: each line end (CRLF, CR, LF) one `\n`.

    LSP counts all three as line ends, so every line and character stays where the
    client counts it; a study saved with bare CRs was one line to the server, which
    reported one PD001 where `check` found the file's real errors.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def create_server() -> PerfLanguageServer:
    """A server with every feature registered, ready for `start_io()`."""
    server = PerfLanguageServer()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: PerfLanguageServer, params: None) -> None:
        ls.shut_down = True

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PerfLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PerfLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PerfLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PerfLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        # A closed file's problems leave the editor's list with it.
        if not ls.initialized:
            return
        ls.published.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: PerfLanguageServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        return analysis.hover(ls.text(uri), params.position, ls.published.get(uri, []))

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."]))
    def completion(ls: PerfLanguageServer, params: types.CompletionParams) -> types.CompletionList:
        items = analysis.completions(ls.text(params.text_document.uri), params.position)
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: PerfLanguageServer, params: types.DefinitionParams) -> types.Location | None:
        uri = params.text_document.uri
        return analysis.definition(ls.text(uri), uri, params.position)

    return server
