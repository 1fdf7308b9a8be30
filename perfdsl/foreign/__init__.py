"""Helpers for implementations beyond Numba, one module per library, each imported only when used.

    triton   compile a `@triton.jit` kernel for a named GPU without one, hand its
             PTX and cubin over as `KernelCode`, and launch that same binary on
             perfdsl's stream

Nothing is imported here: `import perfdsl.foreign.triton` needs Triton installed
(the `triton` extra); the rest of perfdsl never does.
"""
