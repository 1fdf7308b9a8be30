"""The bundled kernels on the CPU target: each variant against its float64 reference."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_cases import CASES, check_outputs, draw, poisoned_outputs

SEEDS = (0, 1, 2)

PARAMS = [
    pytest.param(name, variant, shape, id=f"{name}-{variant.name}-{'x'.join(map(str, shape.values()))}")
    for name, case in CASES.items()
    for variant in case.variants
    for shape in case.cpu_shapes
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "variant", "shape"), PARAMS)
def test_variant_matches_reference(name, variant, shape):
    case = CASES[name]
    for seed in SEEDS:
        inputs, expected = draw(case, shape, seed)
        outputs = poisoned_outputs(case, shape)
        variant.cpu(**inputs, **outputs)
        check_outputs(f"{variant.name} {dict(shape)} seed {seed}", outputs, expected, case.tolerance)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "variant", "shape"), PARAMS)
def test_deterministic_variants_repeat_bit_for_bit(name, variant, shape):
    case = CASES[name]
    assert variant.deterministic
    inputs, _ = draw(case, shape, seed=7)
    first, second = poisoned_outputs(case, shape), poisoned_outputs(case, shape)
    variant.cpu(**inputs, **first)
    variant.cpu(**inputs, **second)
    for key in first:
        assert np.array_equal(first[key], second[key])


def test_inputs_differ_between_seeds():
    for case in CASES.values():
        shape = case.cpu_shapes[-1]
        a, _ = draw(case, shape, seed=0)
        b, _ = draw(case, shape, seed=1)
        assert any(not np.array_equal(a[k], b[k]) for k in a)


def test_variant_names_are_distinct_within_a_module():
    for case in CASES.values():
        names = [v.name for v in case.variants]
        assert len(names) == len(set(names))
        assert all(v.cpu is not None and v.cuda is not None for v in case.variants)
