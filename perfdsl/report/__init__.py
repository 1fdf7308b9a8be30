"""The report stage's renderings: Markdown -> HTML -> PDF, and the figures they embed.

Markdown is the golden artefact (it is what the tests pin down). `markdown`
lays out the sections in SPEC order; each section is a `render_<name>` in one
of the section modules:

    markdown        decision and result (it reads every other section's outcome)
    workload        the workload as declared, the baseline's operating point
    operation       the limiting operation, its share of time, the predicted mechanism
    correctness     errors per shape and seed group, the model-level check
    mechanism       modelled/counted quantities, bandwidth against the roof, static counts
    timing          per shape ratios and verdicts, distributions, quality findings
    end_to_end      f, s, Amdahl's bound against measured, the load curves
    value           value from the end-to-end effect, and the capacity change
    limitations     the declared limits and the fallback
    investigation   each rejected alternative and the evidence it names
    reproduction    commands, registration, environment and manifest

`context` and `formatting` are what the sections share. `html` renders the
Markdown into one document with the print stylesheet, `pdf` lays it out with
WeasyPrint, serving the figures `figures` drew. Each of those imports its
heavy dependency (markdown-it, WeasyPrint, matplotlib) itself, so importing
this package costs nothing.
"""
