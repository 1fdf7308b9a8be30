"""Statements to a typed `Study`: each section's settings read by a schema.

The grammar accepts any statement in any section; this stage knows which
statements belong where, so a misspelt setting gets "did you mean", a value of
the wrong kind says which kind was expected, and a repeated setting is a
duplicate definition. Missing links are left as None for `perfdsl.check`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from perfdsl import codes
from perfdsl.diagnostics import Diagnostic, suggest
from perfdsl.nodes import (
    Application,
    Change,
    Expr,
    Limit,
    Model,
    Name,
    Num,
    Operation,
    Prediction,
    Rejected,
    Shape,
    ShapeSet,
    Study,
    TargetExpectations,
    Text,
    TupleExpr,
    Value,
    Workload,
)
from perfdsl.schema import (
    EVIDENCE_KINDS,
    EVIDENCE_NODES,
    SCHEMAS,
    SHAPES,
    STUDY_SECTIONS,
    STUDY_SETTINGS,
    Spec,
)
from perfdsl.source import Source, Span
from perfdsl.syntax import (
    ConditionStatement,
    LoadStatement,
    ModelStatement,
    PredictionStatement,
    Section,
    Setting,
    ShapesStatement,
    Statement,
)

_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")
"""A dotted name (`pkg.module.attr`): a Python reference written without its colon."""


def _misspelt(word: str, schema: dict[str, Spec], section: Section) -> str | None:
    """The one setting of `schema` that `word` is a near miss of (`repeat` for `repeats`) and that
    the section does not set under its own name; None when there is no such single setting."""
    import difflib

    matches = difflib.get_close_matches(word, list(schema), n=2, cutoff=0.8)
    if len(matches) != 1:
        return None
    stated = {_statement_key(item).id for item in section.items}
    return matches[0] if matches[0] not in stated else None


@attrs.define
class _Lowering:
    """Reads one study; collects diagnostics instead of stopping at the first."""

    source: Source
    diagnostics: list[Diagnostic] = attrs.field(factory=list)

    def report(self, code: str, message: str, span: Span, label: str = "", help: str = "") -> None:
        self.diagnostics.append(codes.diagnostic(code, message, self.source, span, label, help))

    # ------------------------------------------------------------ sections

    def read_section(self, section: Section, schema: dict[str, Spec], where: str) -> dict[str, list]:
        """Group a section's statements by setting name, reporting unknown and repeated ones."""
        found: dict[str, list] = {}
        for item in section.items:
            key = _statement_key(item)
            if isinstance(item, PredictionStatement) and where == "predict":
                found.setdefault("predict", []).append(item)
                continue
            if isinstance(item, ModelStatement) and where == "operation":
                found.setdefault("model", []).append(item)
                continue
            if key.id not in schema:
                self.report(
                    "PD004",
                    f"`{where}` has no setting `{key.id}`",
                    key.span,
                    label="unknown here",
                    help=suggest(key.id, schema) or _known(schema, where),
                )
                meant = _misspelt(key.id, schema, section)
                if meant is not None:
                    # Read as the setting it misspells, so that one typo is one error: `repeat 50`
                    # is not also "no repeats", with a help that contradicts the one above.
                    found.setdefault(meant, []).append(item)
                continue
            previous = found.get(key.id)
            if previous and not schema[key.id].repeatable:
                self.report(
                    "PD303",
                    f"`{key.id}` is set twice in `{where}`",
                    key.span,
                    label="second definition",
                    help=f"keep one `{key.id}`: the first is on line "
                    f"{self.source.position(_statement_key(previous[0]).span.start).line}",
                )
                continue
            found.setdefault(key.id, []).append(item)
        return found

    def expect(self, items: dict[str, list], key: str, kind: str, convert: Callable) -> object:
        """The converted value of a setting, or None (with a diagnostic if it is malformed)."""
        statements = items.get(key)
        if not statements:
            return None
        statement = statements[0]
        value = convert(statement)
        if value is None:
            self.report(
                "PD005",
                f"`{key}` takes {kind}",
                statement.span,
                label="cannot be read as " + kind,
                help=self._how_to_write(key, kind, statement.span),
            )
        elif isinstance(value, Text):
            self.not_blank(value, f"`{key}`")
        return value

    def _how_to_write(self, key: str, kind: str, span: Span) -> str:
        """The help for a malformed value. A dotted name where a Python reference belongs is
        the common slip (`roof mykernels.copy`): say where the colon goes."""
        if "Python reference" in kind:
            written = self.source.snippet(span).split(None, 1)[-1].strip()
            if _DOTTED.fullmatch(written):
                module, _, attr = written.rpartition(".")
                return f"a Python reference puts a colon before its attribute: `{key} {module}:{attr}`"
        return f"write `{key}` followed by {kind}"

    def settings(self, items: dict[str, list], schema: dict[str, Spec]) -> dict[str, object]:
        """Every setting of a schema read from a section's statements, by node field name."""
        values: dict[str, object] = {}
        for key, spec in schema.items():
            if spec.read is None:
                value = self.shapes(items, key)
            elif spec.repeatable:
                value = tuple(
                    v
                    for v in (self.expect({key: [s]}, key, spec.kind, spec.read) for s in items.get(key, []))
                    if v is not None
                )
            else:
                value = self.expect(items, key, spec.kind, spec.read)
            values[spec.field or key] = spec.default if value is None else value
        return values

    def not_blank(self, text: Text, what: str) -> None:
        """A blank string is a missing value: `fallback "   "` states no fallback.

        Reported here, at the string, rather than as the missing link: the
        setting is present, so the fix is to write what it should say.
        """
        if not text.value.strip():
            self.report(
                "PD005",
                f"{what} is blank",
                text.span,
                label="a blank string says nothing",
                help=f"write what {what} should say",
            )

    # ------------------------------------------------------------ the study

    def study(self, root: Section) -> Study:
        settings: dict[str, list] = {}
        sections: dict[str, list[Section]] = {}
        for item in root.items:
            if isinstance(item, Section):
                keyword = item.keyword.id
                if keyword not in STUDY_SECTIONS:
                    self.report(
                        "PD004",
                        f"a study has no section `{keyword}`",
                        item.keyword.span,
                        label="unknown section",
                        help=suggest(keyword, STUDY_SECTIONS + tuple(STUDY_SETTINGS))
                        or _known(dict.fromkeys(STUDY_SECTIONS), "study"),
                    )
                    continue
                sections.setdefault(keyword, []).append(item)
                continue
            key = _statement_key(item)
            if key.id not in STUDY_SETTINGS:
                self.report(
                    "PD004",
                    f"a study has no setting `{key.id}`",
                    key.span,
                    label="unknown setting",
                    help=suggest(key.id, tuple(STUDY_SETTINGS) + STUDY_SECTIONS)
                    or _known(STUDY_SETTINGS, "study"),
                )
                continue
            if key.id in settings:
                self.report(
                    "PD303",
                    f"`{key.id}` is set twice",
                    key.span,
                    label="second definition",
                    help=f"keep one `{key.id}`",
                )
                continue
            settings[key.id] = [item]

        evidence = self.evidence(sections.get("evidence", []))
        predict_sections = self.predict_sections(sections.get("predict", []))
        return Study(
            name=root.name or Name("", root.span),
            **self.settings(settings, STUDY_SETTINGS),
            workload=self.workload(self.single(sections, "workload")),
            operations=self.named(sections.get("operation", []), "operation", self.operation),
            applications=self.named(sections.get("application", []), "application", self.application),
            change=self.change(self.single(sections, "change")),
            predictions=tuple(p for section in predict_sections for p in self.predictions(section)),
            predict_spans=tuple(section.span for section in predict_sections),
            target_expectations=self.named(sections.get("target", []), "target", self.target),
            correctness=evidence.get("correctness"),
            mechanism=evidence.get("mechanism"),
            timing=evidence.get("timing"),
            end_to_end=evidence.get("end_to_end"),
            value=self.value(self.single(sections, "value")),
            limits=tuple(self.limit(s) for s in sections.get("limit", [])),
            rejected=tuple(self.rejected(s) for s in sections.get("rejected", [])),
            span=root.span,
            source=self.source,
        )

    def single(self, sections: dict[str, list[Section]], keyword: str) -> Section | None:
        """The one section of a kind; a second is a duplicate definition."""
        found = sections.get(keyword, [])
        for extra in found[1:]:
            self.report(
                "PD303",
                f"`{keyword}` is defined twice",
                extra.keyword.span,
                label="second definition",
                help=f"merge the two `{keyword}` sections into one",
            )
        section = found[0] if found else None
        if section is not None:
            self.header(section, name=False, text=False)
        return section

    def predict_sections(self, found: list[Section]) -> list[Section]:
        """`predict { }` for every target and `predict <target> { }` for one; one section of each."""
        kept: dict[str | None, Section] = {}
        for section in found:
            self.header(section, name=section.name is not None, text=False)
            key = section.name.id if section.name else None
            if key in kept:
                self.report(
                    "PD303",
                    f"`predict{'' if key is None else ' ' + key}` is defined twice",
                    section.keyword.span,
                    label="second definition",
                    help=f"merge the two `predict{'' if key is None else ' ' + key}` sections into one",
                )
                continue
            kept[key] = section
        return list(kept.values())

    def header(self, section: Section, name: bool, text: bool) -> None:
        """Report a section header with a name or text it should (not) have."""
        keyword = section.keyword.id
        if name and section.name is None:
            self.report(
                "PD005",
                f"`{keyword}` needs a name",
                section.keyword.span,
                label="name missing",
                help=f"write `{keyword} <name> {{ ... }}`",
            )
        if not name and section.name is not None:
            self.report(
                "PD005",
                f"`{keyword}` takes no name",
                section.name.span,
                label="unexpected name",
                help=f"write `{keyword} {{ ... }}`",
            )
        if text and section.text is None:
            self.report(
                "PD005",
                f"`{keyword}` needs a description in quotes",
                section.keyword.span,
                label="description missing",
                help=f'write `{keyword} "..." {{ ... }}`',
            )
        if text and section.text is not None:
            self.not_blank(section.text, f"the description of `{keyword}`")
        if not text and section.text is not None:
            self.report(
                "PD005",
                f"`{keyword}` takes no description",
                section.text.span,
                label="unexpected string",
                help=f"write `{keyword} {{ ... }}`",
            )

    def named(self, sections: list[Section], keyword: str, build: Callable) -> tuple:
        """Build named sections, reporting a name defined twice."""
        seen: dict[str, Section] = {}
        built = []
        for section in sections:
            self.header(section, name=True, text=False)
            if section.name is None:
                continue
            if section.name.id in seen:
                self.report(
                    "PD303",
                    f"{keyword} `{section.name.id}` is defined twice",
                    section.name.span,
                    label="second definition",
                    help="rename one of them, or merge the two",
                )
                continue
            seen[section.name.id] = section
            built.append(build(section))
        return tuple(built)

    # ------------------------------------------------------------ links

    def workload(self, section: Section | None) -> Workload | None:
        if section is None:
            return None
        items = self.read_section(section, SCHEMAS["workload"], "workload")
        return Workload(
            **self.settings(items, SCHEMAS["workload"]),
            weights_span=items["weights"][0].span if "weights" in items else None,
            span=section.span,
        )

    def operation(self, section: Section) -> Operation:
        items = self.read_section(section, SCHEMAS["operation"], "operation")
        models: dict[str, Model] = {}
        for statement in items.get("model", []):
            model = statement.model
            if model.quantity.id in models:
                self.report(
                    "PD303",
                    f"`{model.quantity.id}` is modelled twice",
                    model.quantity.span,
                    label="second model",
                    help="keep one formula pair per quantity",
                )
                continue
            models[model.quantity.id] = model
        return Operation(
            name=section.name,
            **self.settings(items, SCHEMAS["operation"]),
            models=tuple(models.values()),
            span=section.span,
        )

    def application(self, section: Section) -> Application:
        items = self.read_section(section, SCHEMAS["application"], "application")
        return Application(
            name=section.name,
            **self.settings(items, SCHEMAS["application"]),
            span=section.span,
        )

    def change(self, section: Section | None) -> Change | None:
        if section is None:
            return None
        items = self.read_section(section, SCHEMAS["change"], "change")
        return Change(**self.settings(items, SCHEMAS["change"]), span=section.span)

    def target(self, section: Section) -> TargetExpectations:
        items = self.read_section(section, SCHEMAS["target"], f"target {section.name.id}")
        return TargetExpectations(
            name=section.name,
            **self.settings(items, SCHEMAS["target"]),
            span=section.span,
        )

    def predictions(self, section: Section) -> tuple[Prediction, ...]:
        predictions: list[Prediction] = []
        seen: set[tuple[str, str]] = set()
        for item in section.items:
            if not isinstance(item, PredictionStatement):
                key = _statement_key(item)
                self.report(
                    "PD005",
                    "`predict` holds predictions only",
                    key.span,
                    label="not a prediction",
                    help="write `<operation or application>.<quantity> ratio <= <bound>`",
                )
                continue
            prediction = item.prediction
            key = (prediction.target, prediction.statistic.id)
            if key in seen:
                self.report(
                    "PD303",
                    f"`{prediction.target}` is predicted twice",
                    prediction.span,
                    label="second prediction",
                    help="keep one prediction per quantity",
                )
                continue
            seen.add(key)
            predictions.append(attrs.evolve(prediction, on=section.name))
        return tuple(predictions)

    def evidence(self, sections: list[Section]) -> dict[str, object]:
        built: dict[str, object] = {}
        for section in sections:
            self.header(section, name=True, text=False)
            if section.name is None:
                continue
            kind = section.name.id
            if kind not in EVIDENCE_KINDS:
                self.report(
                    "PD004",
                    f"there is no `{kind}` evidence",
                    section.name.span,
                    label="unknown kind of evidence",
                    help=suggest(kind, EVIDENCE_KINDS)
                    or "evidence is one of " + ", ".join(f"`{k}`" for k in EVIDENCE_KINDS),
                )
                continue
            if kind in built:
                self.report(
                    "PD303",
                    f"`evidence {kind}` is defined twice",
                    section.name.span,
                    label="second definition",
                    help="merge the two sections",
                )
                continue
            items = self.read_section(section, SCHEMAS[kind], f"evidence {kind}")
            built[kind] = EVIDENCE_NODES[kind](**self.settings(items, SCHEMAS[kind]), span=section.span)
        return built

    def value(self, section: Section | None) -> Value | None:
        if section is None:
            return None
        items = self.read_section(section, SCHEMAS["value"], "value")
        return Value(**self.settings(items, SCHEMAS["value"]), span=section.span)

    def limit(self, section: Section) -> Limit:
        self.header(section, name=True, text=True)
        items = self.read_section(section, SCHEMAS["limit"], "limit")
        return Limit(
            kind=section.name or Name("", section.keyword.span),
            text=section.text,
            **self.settings(items, SCHEMAS["limit"]),
            span=section.span,
        )

    def rejected(self, section: Section) -> Rejected:
        self.header(section, name=False, text=True)
        items = self.read_section(section, SCHEMAS["rejected"], "rejected")
        return Rejected(
            text=section.text,
            **self.settings(items, SCHEMAS["rejected"]),
            span=section.span,
        )

    # ------------------------------------------------------------ shapes

    def shapes(self, items: dict[str, list], key: str) -> ShapeSet | None:
        statements = items.get(key)
        if not statements:
            return None
        statement = statements[0]
        if not isinstance(statement, ShapesStatement):
            self.report(
                "PD005",
                f"`{key}` takes {SHAPES}",
                statement.span,
                label="not a shape list",
                help=f"write `{key} (M, N) in [(64, 4096)]`",
            )
            return None
        symbols = _symbols(statement.symbols)
        if symbols is None:
            self.report(
                "PD005",
                "shape symbols must be names",
                statement.symbols.span,
                label="expected a name or a tuple of names",
                help="write `(M, N)` or `N`",
            )
            return None
        shapes: list[Shape] = []
        for item in statement.shapes.items:
            sizes = _sizes(item)
            if sizes is None:
                self.report(
                    "PD005",
                    "a shape is a tuple of whole numbers",
                    item.span,
                    label="not a shape",
                    help="write sizes like `(64, 4096)`",
                )
                continue
            if len(sizes) != len(symbols):
                names = ", ".join(s.id for s in symbols)
                self.report(
                    "PD304",
                    f"this shape has {len(sizes)} size{'s' if len(sizes) != 1 else ''} "
                    f"for {len(symbols)} symbol{'s' if len(symbols) != 1 else ''} ({names})",
                    item.span,
                    label="one size per symbol",
                    help=f"give one size for each of ({names})",
                )
                continue
            shapes.append(Shape(sizes, item.span))
        return ShapeSet(symbols, tuple(shapes), statement.span)


def _known(schema: dict[str, object], where: str) -> str:
    return f"`{where}` takes " + ", ".join(f"`{k}`" for k in schema)


def _statement_key(item: Statement) -> Name:
    if isinstance(item, Section):
        return item.keyword
    if isinstance(item, (Setting, ShapesStatement, ConditionStatement)):
        return item.key
    if isinstance(item, ModelStatement):
        return item.model.quantity
    if isinstance(item, PredictionStatement):
        return item.prediction.subject
    assert isinstance(item, LoadStatement)
    return Name("load", Span(item.span.start, item.span.start + 4))


def _symbols(expr: Expr) -> tuple[Name, ...] | None:
    items = expr.items if isinstance(expr, TupleExpr) else (expr,)
    if all(isinstance(item, Name) for item in items):
        return tuple(items)  # type: ignore[arg-type]
    return None


def _sizes(expr: Expr) -> tuple[int, ...] | None:
    items = expr.items if isinstance(expr, TupleExpr) else (expr,)
    sizes: list[int] = []
    for item in items:
        if not isinstance(item, Num) or item.quantity.unit is not None:
            return None
        if not item.value.is_integer() or item.value < 0:
            return None
        sizes.append(int(item.value))
    return tuple(sizes)


def lower(root: Section, source: Source) -> tuple[Study, list[Diagnostic]]:
    """The typed study for a parsed `study` section, and the structural diagnostics."""
    lowering = _Lowering(source)
    study = lowering.study(root)
    return study, lowering.diagnostics
