"""The contract between perfdsl and the code a study measures.

A study names its implementations by Python reference (`kernels.rmsnorm:fused`).
`perfdsl run` imports the module and expects the attribute to be a Reference,
a Variant or an Application. They are plain frozen records of callables, so a
user's own module needs nothing from perfdsl but this file, and `perfdsl check`
never has to import any of them.

Calling conventions (the same for every target, so the harness can treat
baseline and change alike):

* inputs and outputs are passed as keyword arguments named after the keys of
  the dictionaries that `Reference.inputs` and `Reference.outputs` return;
* `Variant.cpu(**inputs, **outputs)` runs to completion and writes the outputs
  in place;
* `Variant.cuda(stream, **inputs, **outputs)` takes device arrays and only
  *enqueues* its launches on `stream`: the harness synchronises and times;
* every output element must be written: the harness poisons outputs with NaN
  before each call and checks that none survive;
* inputs are read-only: the correctness check compares each input after the
  calls with its value before, and one changed in place fails the case ("input
  `x` was changed by the call"), since the timed calls would read the corrupted
  buffers.

Implementations beyond Numba (Triton, PyTorch, CuPy, cuda.core / NVRTC) give
`Variant.cuda_bind` instead of `Variant.cuda`:

* `cuda_bind(stream, **inputs, **outputs) -> call` is called once per buffer set,
  outside the timed region, and returns a no-argument `call()` that enqueues one
  run. The arrays are perfdsl's device arrays; each exposes
  `__cuda_array_interface__` (v3), which `torch.as_tensor(a, device="cuda")`,
  `cupy.asarray(a)` and cuda.core's `StridedMemoryView` take without a copy, so
  wrapping them is paid once, not per sample. `stream` is a `CudaStream`: it
  exposes `__cuda_stream__` (the cuda.core protocol) and its raw `handle`
  (for `torch.cuda.ExternalStream(stream.handle)`,
  `cupy.cuda.ExternalStream(stream.handle)` or Triton's `stream=` argument);
* `call()` must launch on that stream and must not synchronise: the harness
  times it between two CUDA events recorded on the same stream, so work
  launched elsewhere is not timed (and not waited for);
* `cuda_code(dtype, cc)` optionally hands over the compiled code of every kernel
  `call()` launches (`KernelCode`: PTX and/or cubin, under the kernel's entry
  name). It is archived beside Numba's kernels and read the same way (cubin ->
  SASS); its names are what Nsight Compute filters and attributes launches by.

Under `cudasim` the arrays' interface points at host memory (the simulator has
no device), so there only code that reads the interface itself can run.

A CPU implementation is any Python callable (NumPy, PyTorch on the CPU through
`torch.from_numpy`): `Variant.cpu` as above.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

Shape = Mapping[str, int]
"""A workload shape: the study's shape symbols bound to sizes, e.g. {"M": 64, "N": 4096}."""

KernelSignature = tuple[Any, str]
"""A compiled kernel and the Numba signature it is compiled for, e.g.
(rmsnorm_fused_kernel, "void(float32[:, ::1], float32[::1], float32[:, ::1])").
The signature may contain `{dtype}`, replaced by the workload's dtype name."""


@attrs.frozen
class Reference:
    """The float64 definition of an operation: what it computes and on what inputs.

    The reference owns the problem: baseline and change are checked against it,
    and it alone decides how inputs are drawn, so both variants see the same data.
    """

    name: str
    """How messages name it: "reference `rmsnorm` failed: ..."."""
    inputs: Callable[[Shape, Any, Any], dict[str, Any]]
    """inputs(shape, rng: numpy.random.Generator, dtype: numpy.dtype) -> host arrays.
    Never zeros: draw from rng so each seed gives fresh data."""
    outputs: Callable[[Shape], dict[str, tuple[int, ...]]]
    """outputs(shape) -> the shape of every output array (dtype is the workload's)."""
    compute: Callable[..., dict[str, Any]]
    """compute(**inputs) -> float64 outputs: the answer to compare against. Floating-point inputs
    arrive as float64 (complex as complex128); integer and boolean ones (indices, masks) as drawn."""


@attrs.frozen
class CudaStream:
    """The stream a foreign CUDA implementation must launch on: perfdsl's timing stream."""

    handle: int
    """The raw `CUstream` (0 under the simulator, which has no stream)."""
    numba: Any = attrs.field(default=None, eq=False, repr=False)
    """The same stream as a numba.cuda stream, for code that launches Numba kernels too."""

    def __cuda_stream__(self) -> tuple[int, int]:
        """The cuda.core stream protocol: (protocol version 0, the raw handle)."""
        return (0, self.handle)


@attrs.frozen
class KernelCode:
    """One compiled CUDA kernel that a foreign implementation launches, as its compiler wrote it."""

    name: str
    """The kernel's entry symbol, as the cubin, nvdisasm and Nsight Compute name it."""
    ptx: str | None = None
    """The kernel's PTX, where the compiler gives it: archived, and assembled where no cubin is."""
    cubin: bytes | None = None
    """The binary that runs, where the compiler gives it (Triton's `asm["cubin"]`); without it the
    PTX is assembled with nvJitLink for the static evidence."""
    signature: str = ""
    """What the kernel was compiled for, in its compiler's words (argument types, constants)."""
    compiler: str = ""
    """The compiler and its version, e.g. "triton 3.9.0", recorded with the code."""


@attrs.frozen
class Variant:
    """One implementation of an operation (a baseline or a change) for each target."""

    name: str
    """Distinct across a study: it labels samples, kernels and compiled code."""
    cpu: Callable[..., None] | None = None
    """`cpu(**inputs, **outputs)`: runs to completion on host arrays, writing every output in place."""
    cuda: Callable[..., None] | None = None
    """`cuda(stream, **inputs, **outputs)`: enqueues its Numba launches on `stream` on device arrays;
    the harness synchronises and times."""
    cuda_bind: Callable[..., Callable[[], None]] | None = None
    """For implementations beyond Numba: `cuda_bind(stream, **inputs, **outputs) -> call`,
    called once per buffer set (see the module docstring). A variant gives `cuda` or
    `cuda_bind`, not both."""
    cuda_code: Callable[[str, tuple[int, int]], Sequence[KernelCode]] | None = None
    """`cuda_code(dtype, cc)`: the compiled code of every kernel `cuda_bind`'s call launches, for
    compute capability `cc`, e.g. (9, 0); the dtype is the workload's, e.g. "float32"."""
    cuda_kernels: tuple[KernelSignature, ...] = ()
    """Every CUDA kernel `cuda` launches, for static PTX/SASS evidence."""
    cpu_kernels: tuple[KernelSignature, ...] = ()
    """Every Numba CPU function `cpu` calls, for the archived LLVM IR and assembly. Empty when
    `cpu` is plain Python (NumPy, say): it runs and is timed the same, with nothing compiled to archive."""
    deterministic: bool = True
    """Whether two runs on the same input must agree bit for bit."""
    read_share: float | None = None
    """The share of the bytes this variant moves that are reads, where its buffers do not tell
    (intermediates written and read again). None: its buffers' share, each input read once and
    each output written once. The roof a kernel is held to depends on it (`evaluate.roofs`)."""
    scratch_bytes: Callable[[Shape], int] | None = None
    """Bytes the variant writes and reads again within a call, or reuses from call to call: a
    workspace, or its own output updated in place pass after pass. Not rotated like its buffers:
    where they fit in a cache that is not flushed between calls, part of its modelled traffic is
    cache traffic, and it is not held to a DRAM roof."""
    sparse_inputs: tuple[str, ...] = ()
    """Inputs the variant reads only in part (a gather's table, a masked or indexed read): their
    bytes still count towards its working set, but not towards the traffic no call can avoid,
    which its `bytes` model is held to (PQ010). Names are keys the reference's `inputs` returns."""

    def __attrs_post_init__(self) -> None:
        if self.cuda is not None and self.cuda_bind is not None:
            raise ValueError(f"variant `{self.name}` gives both `cuda` and `cuda_bind`: keep one")
        if self.cuda_code is not None and self.cuda_bind is None:
            raise ValueError(f"variant `{self.name}` gives `cuda_code` without `cuda_bind`")


@attrs.frozen
class AppContext:
    """What an application is given to build one request."""

    target: str
    """"cpu", "cuda" or "cudasim"."""
    op: Callable[..., None]
    """The studied operation, bound to the target: the same calling convention as
    `Variant.cpu` on the CPU and as `Variant.cuda` minus the stream on CUDA."""
    shape: Shape
    """The operating point: the workload shape with the most production traffic."""
    rng: Any
    """A `numpy.random.Generator` seeded for this preparation: draw the request's inputs from it."""
    dtype: Any
    """The workload's element type, as a `numpy.dtype`."""


@attrs.frozen
class Application:
    """An end-to-end workload that calls the studied operation among other work.

    `prepare(ctx)` allocates whatever the application needs and returns a
    `request()` callable that serves one request synchronously and returns its
    output as a host array (so the model-level comparison can read it). The
    operation must be called only through `ctx.op`: that is how the harness
    swaps baseline for change and measures the operation's share of time.
    `prepare` is called again before each block, share round and load probe
    (`runtime.preparation`: where the arrays land is noise within an arm, not a
    difference between arms), so it must be repeatable: inputs from `ctx.rng`. The model-level
    check serves the float64 run twice on one seed and fails an application whose two outputs
    differ.
    """

    name: str
    """How the report and messages name the application."""
    prepare: Callable[[AppContext], Callable[[], Any]]
    """`prepare(ctx) -> request`: allocates what a request needs and returns `request()`."""
