"""The measured code of perfdsl's bundled case studies.

Each module holds one operation: a float64 `Reference` and the `Variant`s a study
compares, written against `perfdsl.kernel`. `apps` holds the end-to-end
`Application`s that call those operations. These modules are inputs to the tool,
not part of it: a user's own kernels module looks the same.

    rmsnorm     unfused (materialised intermediate) vs fused    bytes removed
    transpose   naive, tiled (bank conflicts), padded           bank conflicts reduced
    reduction   multi vs single launch; one vs four chains      launches removed, chains shortened
    copy        the device-memory roof at the same access width

The CPU functions are compiled with `nogil=True`: the load test's scheduler is a
Python thread, and a kernel holding the GIL delays every arrival behind it, so
the generator's own lateness (up to a whole kernel call) would be charged to
the variant with the longest calls.
"""
