"""The report's formatting of the evaluation's words."""

from __future__ import annotations

from perfdsl.report import formatting as fmt


def test_a_message_after_a_bold_heading_reads_as_a_sentence() -> None:
    assert fmt.sentence("the declared share 9% contradicts `f`") == "The declared share 9% contradicts `f`"
    assert fmt.sentence("`decode_step` is slower") == "`decode_step` is slower"
