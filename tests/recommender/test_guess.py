"""An estimate on the wire names a bounded number of references and says how many there are."""

from __future__ import annotations

from app.contracts import EstimateKind, PowerBasis
from app.contracts.recommend import MAX_REFERENCES
from app.recommender.guess import Guess


def guess(references: list[str]) -> Guess:
    return Guess(
        kind=EstimateKind.predicted,
        source="lab",
        throughput_samples_per_s=100.0,
        error_pct=20.0,
        latency_p99_ms=10.0,
        power_w=200.0,
        power_basis=PowerBasis.tdp,
        why=[],
        references=references,
    )


def test_a_fleet_of_references_is_named_up_to_the_limit_and_counted_in_full() -> None:
    many = [f"NVIDIA A100 on node-{i:04d} (cuda:0)" for i in range(750)]
    estimate = guess(many).to_contract()
    assert estimate.references == many[:MAX_REFERENCES]
    assert estimate.references_total == 750


def test_a_few_references_are_all_named() -> None:
    estimate = guess(["a", "b"]).to_contract()
    assert estimate.references == ["a", "b"] and estimate.references_total == 2
    assert guess([]).to_contract().references_total == 0
