"""The arm names a bundle's files use: in the sample CSVs, results.json's per-arm maps, evaluation.json.

The runtime writes these names and the evaluation, the report and the history
read them back, so they are declared once, here, beside the records that hold
them; a second spelling of an arm is a file its reader no longer finds.
"""

from __future__ import annotations

ARMS = ("baseline", "change")
"""The two arms a study compares, in the order every table lists them."""
ROOF_ARM = "copy"
"""The copy roof: the study's own roof kernel, timed beside the arms."""
ROOF_ARMS = ("read", "write", ROOF_ARM)
"""The roofs' arms; read and write are timed where the roof's module defines them."""
EMPTY_ARM = "(empty)"
"""The overhead samples: an empty call timed between the blocks."""
