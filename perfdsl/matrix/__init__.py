"""Study matrices: one study over many machines, environments and shapes, one `perfdsl run` per cell.

`spec` reads the matrix file, `cells` expands its axes, `task` runs one cell
where it lands, `local` and `slurm` are the executors (behind `executor`'s
interface), `drive` submits, watches and resumes, `state` keeps every cell's
record, `report` writes the matrix report.
"""
