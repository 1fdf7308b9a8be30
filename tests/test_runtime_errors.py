"""A failure in a study's own code names its line: the innermost frame outside perfdsl and the libraries."""

from __future__ import annotations

import os

import numpy as np
import pytest

from perfdsl.runtime.errors import check_names, describe_error, user_frame


def _draws_a_negative_count() -> None:
    np.linspace(0.0, 1.0, num=-1)  # numpy raises this from its own Python code


def test_an_error_raised_inside_numpy_names_the_line_that_called_it() -> None:
    with pytest.raises(ValueError) as caught:
        _draws_a_negative_count()
    code = _draws_a_negative_count.__code__
    here = f"{os.path.relpath(code.co_filename)}:{code.co_firstlineno + 1} in _draws_a_negative_count"
    assert user_frame(caught.value) == here
    said = describe_error(caught.value)
    assert said.startswith("ValueError: Number of samples, -1, must be non-negative") and said.endswith(
        f"(at {here})"
    )


def test_an_error_that_never_ran_the_studys_code_names_no_line() -> None:
    assert user_frame(ValueError("built, never raised")) is None
    assert describe_error(KeyError()) == "KeyError"


def test_a_parameter_spelt_otherwise_than_the_inputs_is_named_with_them() -> None:
    def compute(indices, table):  # `inputs` returns `idx`
        return {"out": table[indices]}

    with pytest.raises(TypeError) as caught:
        check_names(compute, ("table", "idx"), "compute()", "`inputs`")
    said = str(caught.value)
    assert said.startswith("compute() takes its arrays by the names `inputs` gives them (`idx`, `table`): ")
    assert "'indices'" in said
    check_names(compute, ("indices", "table"), "compute()", "`inputs`")  # the names it takes
    check_names(lambda **arrays: arrays, ("idx",), "compute()", "`inputs`")  # takes any name
