"""What nothing could estimate is said once per ask, with the runtime x precision pairs it is made of
(app/recommender/options.py), counting only what the ask's filters keep."""

from __future__ import annotations

from app.contracts import Precision
from app.recommender.columns import columns
from app.recommender.options import OptionTable

UNESTIMATED = {
    ("torch-eager", Precision.tf32): 2846,
    ("torch-eager", Precision.fp16): 2334,
    ("torch-eager", Precision.bf16): 1614,
    ("openvino", Precision.int8): 336,
}


def table() -> OptionTable:
    return OptionTable(columns([]), ["before"], UNESTIMATED, ["after"])


def test_the_note_counts_every_pair_and_names_the_largest_runtime_and_precision_pairs() -> None:
    before, middle, after = table().notes(None, None)
    assert (before, after) == ("before", "after")
    assert middle.startswith(f"{sum(UNESTIMATED.values())} hardware x config pairs")
    assert middle.endswith("torch-eager tf32 2846, torch-eager fp16 2334, torch-eager bf16 1614, ...)")


def test_the_asks_filters_choose_what_the_note_counts() -> None:
    _, middle, _ = table().notes([Precision.int8, Precision.tf32], ["openvino"])
    assert middle.startswith("336 hardware x config pairs") and middle.endswith(": openvino int8 336)")
    assert table().notes([Precision.fp32], None) == ["before", "after"]
