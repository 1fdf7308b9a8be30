"""The report stage's renderings: Markdown -> HTML -> PDF, and the figures they embed.

Markdown is the golden artefact (it is what the tests pin down); `html` renders
it into one standalone document with the print stylesheet and the figures
inlined, `pdf` lays that document out with WeasyPrint, and `figures` draws the
SVG charts. Each of those modules imports its heavy dependency (markdown-it,
WeasyPrint, matplotlib) itself, so importing this package costs nothing.
"""
