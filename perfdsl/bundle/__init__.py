"""The bundle's files as typed records: the one place that knows their JSON keys.

`files` writes, verifies and finds bundles (layout, manifest); `results`,
`application` and `load` are results.json's records; the `evaluation` package
is evaluation.json's; `versions` holds the
format versions and refuses a file of a version this code cannot read. The
runtime writes these records, the evaluation reads them. Nothing here imports
scipy or numba, so reading a bundle stays cheap.
"""
