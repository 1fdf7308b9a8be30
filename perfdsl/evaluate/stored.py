"""Where a bundle keeps its evaluation, and the schema it is written in.

Apart from `evaluation` on purpose: `perfdsl build` asks whether a bundle's
evaluation.json is current before anything else, and answering that must not
import the statistics (scipy alone costs a second of a fresh build).
"""

EVALUATION = "evaluation.json"
"""The file `perfdsl evaluate` writes into the bundle; derived, so verified apart."""

SCHEMA = "perfdsl.evaluation/2"
"""The version of evaluation.json's layout; a file of another schema is evaluated again."""
