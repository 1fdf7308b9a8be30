"""What the language server answers, as pure functions of a study's text and a position.

Kept apart from the pygls wiring in `perfdsl.lsp.server` so each answer can be
tested and timed without a client. Diagnostics come from `check` itself
(`perfdsl.commands.check.diagnose`), so the editor shows exactly what the
command line prints. Completion and definitions read the text with small
regular expressions instead of the parser, because while someone types the
study rarely parses: an operation declared above a half-written line must
still complete and still be found.

Positions: LSP counts lines from 0 and columns in UTF-16 code units, the
protocol's default; spans count characters. `_Lines` converts between them.
"""

from __future__ import annotations

import bisect
import re
from functools import cached_property

import attrs
from lsprotocol import types

from perfdsl import codes, vocabulary
from perfdsl.commands.check import diagnose
from perfdsl.diagnostics import Diagnostic
from perfdsl.editor.words import CONSTANTS, GRAMMAR_WORDS, SECTIONS, SETTINGS_BY_SECTION, VALUE_KINDS
from perfdsl.schema import EVIDENCE_KINDS
from perfdsl.source import Source

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE = re.compile(r"PD[0-9]{3}", re.IGNORECASE)
_DECLARATION = re.compile(rf"^[ \t]*(operation|application)[ \t]+({_IDENT})", re.MULTILINE)
# Strings and comments, blanked before braces are counted so a `{` inside either is not a block.
_OPAQUE = re.compile(r'"([^"\\\n]|\\.)*"?|#[^\n]*')
_SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


@attrs.frozen
class _Lines:
    """A text's lines, for converting character offsets to LSP positions and back."""

    text: str

    @cached_property
    def starts(self) -> list[int]:
        return [0, *(i + 1 for i, char in enumerate(self.text) if char == "\n")]

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        prefix = self.text[self.starts[line] : offset]
        return types.Position(line=line, character=len(prefix.encode("utf-16-le")) // 2)

    def offset(self, position: types.Position) -> int:
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.starts[position.line + 1] - 1 if position.line + 1 < len(self.starts) else len(self.text)
        units = 0
        for index in range(start, end):
            if units >= position.character:
                return index
            units += 2 if ord(self.text[index]) > 0xFFFF else 1
        return end

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))


# ---------------------------------------------------------------- diagnostics


def lsp_diagnostics(path: str, text: str) -> list[types.Diagnostic]:
    """`check`'s diagnostics for the text, as LSP diagnostics (code, range, help in the message)."""
    lines = _Lines(text)
    return [_convert(d, lines) for d in diagnose(Source(path, text))]


def _convert(diagnostic: Diagnostic, lines: _Lines) -> types.Diagnostic:
    message = diagnostic.message
    if diagnostic.label:
        message += f" ({diagnostic.label})"
    if diagnostic.help:
        message += f"\nhelp: {diagnostic.help}"
    return types.Diagnostic(
        range=lines.range(diagnostic.span.start, diagnostic.span.end),
        message=message,
        severity=_SEVERITIES[diagnostic.severity],
        code=diagnostic.code,
        source="perfdsl",
    )


# ---------------------------------------------------------------- hover


def hover(text: str, position: types.Position, published: list[types.Diagnostic]) -> types.Hover | None:
    """`perfdsl explain` for the code under the cursor, or for a diagnostic whose range holds it.

    Elsewhere, over a setting's name, what the setting takes in its section.
    """
    lines = _Lines(text)
    word = _word_at(text, lines.offset(position))
    entries: list[codes.Code] = []
    if word is not None and _CODE.fullmatch(word[0]) and codes.lookup(word[0]):
        entries.append(codes.lookup(word[0]))  # type: ignore[arg-type]
    else:
        for diagnostic in published:
            entry = codes.lookup(str(diagnostic.code))
            if entry is not None and _contains(diagnostic.range, position) and entry not in entries:
                entries.append(entry)
    if not entries:
        return _setting_hover(text, word)
    value = "\n\n".join(f"```text\n{codes.explain(entry)}```" for entry in entries)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def _setting_hover(text: str, word: tuple[str, int] | None) -> types.Hover | None:
    if word is None:
        return None
    section = enclosing_section(text, word[1])
    takes = VALUE_KINDS.get(section or "", {}).get(word[0])
    if takes is None:
        return None
    block = f"evidence {section}" if section in EVIDENCE_KINDS else section
    value = f"`{word[0]}` in `{block}` takes {takes}"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def _contains(span: types.Range, position: types.Position) -> bool:
    start = (span.start.line, span.start.character)
    end = (span.end.line, span.end.character)
    return start <= (position.line, position.character) <= end


def _word_at(text: str, offset: int) -> tuple[str, int] | None:
    """The identifier touching `offset` and where it starts, or None."""
    for match in _WORD.finditer(text, max(0, text.rfind("\n", 0, offset) + 1)):
        if match.start() > offset:
            break
        if match.start() <= offset <= match.end():
            return match.group(), match.start()
    return None


# ---------------------------------------------------------------- names


def declarations(text: str) -> dict[str, tuple[str, int, int]]:
    """The study's operations and applications: name -> (kind, start, end of the name)."""
    found: dict[str, tuple[str, int, int]] = {}
    for match in _DECLARATION.finditer(_blank_opaque(text)):
        found.setdefault(match.group(2), (match.group(1), match.start(2), match.end(2)))
    return found


def definition(text: str, uri: str, position: types.Position) -> types.Location | None:
    """Where the operation or application named under the cursor is declared."""
    lines = _Lines(text)
    word = _word_at(text, lines.offset(position))
    if word is None or word[0] not in (names := declarations(text)):
        return None
    _, start, end = names[word[0]]
    return types.Location(uri=uri, range=lines.range(start, end))


# ---------------------------------------------------------------- completion


def completions(text: str, position: types.Position) -> list[types.CompletionItem]:
    """What may be written at the cursor: after `name.` its quantities, else words and names."""
    offset = _Lines(text).offset(position)
    names = declarations(text)
    subject = re.search(rf"({_IDENT})\.({_IDENT})?$", text[:offset])
    if subject is not None and subject.group(1) in names:
        kind = names[subject.group(1)][0]
        quantities = vocabulary.OPERATION_EVIDENCE if kind == "operation" else vocabulary.APPLICATION_EVIDENCE
        return [_item(q, types.CompletionItemKind.Field, f"{kind} quantity") for q in quantities]
    section = enclosing_section(text, offset)
    items = [_item(w, types.CompletionItemKind.Property, f"in {section}") for w in _settings(section)]
    items += [_item(w, types.CompletionItemKind.Keyword, "keyword") for w in (*SECTIONS, *GRAMMAR_WORDS)]
    items += [_item(w, types.CompletionItemKind.EnumMember, "value") for w in CONSTANTS]
    items += [_item(name, types.CompletionItemKind.Reference, kind) for name, (kind, _, _) in names.items()]
    unique: dict[str, types.CompletionItem] = {}
    for item in items:
        unique.setdefault(item.label, item)
    return list(unique.values())


def _settings(section: str | None) -> tuple[str, ...]:
    if section is None:
        return ("study",)
    settings = SETTINGS_BY_SECTION.get(section, ())
    return (*settings, *vocabulary.MEASURES) if section == "operation" else settings


def _item(label: str, kind: types.CompletionItemKind, detail: str) -> types.CompletionItem:
    return types.CompletionItem(label=label, kind=kind, detail=detail)


def enclosing_section(text: str, offset: int) -> str | None:
    """The kind of block the offset is in: `study`, `workload`, `timing` (for `evidence timing`) ..."""
    stack: list[str] = []
    header_start = 0
    plain = _blank_opaque(text[:offset])
    for index, char in enumerate(plain):
        if char == "{":
            words = plain[header_start:index].split()
            kind = words[0] if words else ""
            stack.append(words[1] if kind == "evidence" and len(words) > 1 else kind)
            header_start = index + 1
        elif char == "}":
            if stack:
                stack.pop()
            header_start = index + 1
        elif char in "\n;":
            header_start = index + 1
    return stack[-1] if stack else None


def _blank_opaque(text: str) -> str:
    """The text with strings and comments replaced by spaces of the same length."""
    return _OPAQUE.sub(lambda match: " " * len(match.group()), text)
