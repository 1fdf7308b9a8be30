"""evaluation.json's records: what `perfdsl evaluate` concludes, as the report reads it.

`evaluation.Evaluation` is the file (an imported study's is
`imported.ImportedEvaluation`); the other modules hold its sections. The
statistics (`perfdsl.stats`, `perfdsl.evaluate`) construct these records and
`plain` writes and reads them, so the report and any later reader take typed
records from the file without importing scipy.
"""
