"""A variant that reads inputs only in part: its arms record the bytes no call can avoid."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
import runtime_fixtures as fx

from perfdsl.bundle.sampling import Rotation
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import prepare_arms

SHAPE = {"M": 2, "N": 8}
SET_BYTES = 4 * (2 * 8 + 8 + 2 * 8)
"""float32 x (M x N), w (N) and out (M x N)."""


def test_the_sparse_inputs_bytes_are_left_out_of_the_unavoidable_bytes() -> None:
    gather = attrs.evolve(fx.good, name="gather", sparse_inputs=("w",))
    plain, sparse = prepare_arms(
        Target(), fx.reference, [fx.good, gather], SHAPE, np.float32, requested_sets=1
    )
    assert (plain.set_bytes, plain.compulsory_bytes) == (SET_BYTES, None)
    assert (sparse.set_bytes, sparse.compulsory_bytes) == (SET_BYTES, SET_BYTES - 4 * 8)


def test_only_an_arm_with_sparse_inputs_writes_the_key_and_it_reads_back() -> None:
    plain = Rotation("good", 4, SET_BYTES, 1 << 20)
    sparse = attrs.evolve(plain, arm="gather", compulsory_bytes=SET_BYTES - 32)
    assert "compulsory_bytes" not in plain.to_json()
    assert sparse.to_json()["compulsory_bytes"] == SET_BYTES - 32
    assert Rotation.from_json(sparse.to_json()) == sparse
    assert (plain.unavoidable_bytes, sparse.unavoidable_bytes) == (SET_BYTES, SET_BYTES - 32)


def test_a_sparse_input_the_reference_does_not_draw_is_named() -> None:
    misspelt = attrs.evolve(fx.good, name="gather", sparse_inputs=("table",))
    with pytest.raises(ValueError, match=r"`gather` declares sparse_inputs `table`, .* returns `x`, `w`"):
        prepare_arms(Target(), fx.reference, [misspelt], SHAPE, np.float32, requested_sets=1)
