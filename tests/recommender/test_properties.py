"""Properties of every answer, over random asks on the hand-made lab (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.contracts import Candidate, EstimateKind, Recommendation, Rejection, WorkloadSpec
from app.db.engine import Database
from app.recommender import recommend
from app.recommender.objectives import objectives
from testkit.factories import Api
from testkit.lab import LAB, build, cpu_run

EXAMPLES = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
PRECISIONS = ["fp32", "bf16", "fp16", "tf32", "int8"]
RUNTIMES = ["torch-eager", "onnxruntime-cpu", "pytorch-ngc"]

specs = st.fixed_dictionaries(
    {
        "workload": st.just("resnet50"),
        "task": st.sampled_from(["infer", "train"]),
        "batch_size": st.none() | st.sampled_from([1, 8, 16, 32, 64]),
        "objective": st.sampled_from(objectives.names()),  # every one registered
        "scope": st.sampled_from(["owned", "catalog"]),
        "limit": st.just(1000),
        "constraints": st.fixed_dictionaries(
            {
                "power_budget_w": st.none() | st.floats(min_value=30, max_value=900),
                "latency_p99_slo_ms": st.none() | st.floats(min_value=0.5, max_value=500),
                "precisions": st.none() | st.lists(st.sampled_from(PRECISIONS), min_size=1, unique=True),
                "runtimes": st.none() | st.lists(st.sampled_from(RUNTIMES), min_size=1, unique=True),
            }
        ),
    }
)


def ask(db: Database, body: dict[str, Any]) -> Recommendation:
    with db.reading() as session:
        return recommend(session, WorkloadSpec.model_validate(body))


def key(c: Candidate | Rejection) -> tuple[Any, ...]:
    return (c.hardware.machine_id, c.hardware.catalog_id, c.runtime, c.precision, c.batch_size, c.threads)


def lab_configs(api: Api) -> None:
    build(api)
    cpu_run(api)


def test_no_candidate_breaks_a_constraint_or_a_filter(api: Api, db: Database) -> None:
    lab_configs(api)

    @EXAMPLES
    @given(specs)
    def check(body: dict[str, Any]) -> None:
        answer = ask(db, body)
        c = answer.query.constraints
        for candidate in answer.candidates:
            e = candidate.estimate
            if c.power_budget_w is not None:
                assert e.power_w is not None and e.power_w <= c.power_budget_w * (1 + 1e-9)
            if c.latency_p99_slo_ms is not None:
                assert e.latency_p99_ms is not None and e.latency_p99_ms <= c.latency_p99_slo_ms * (1 + 1e-9)
            if c.precisions is not None:
                assert candidate.precision in c.precisions
            if c.runtimes is not None:
                assert candidate.runtime in c.runtimes
            if body["batch_size"] is not None and candidate.estimate.source == "lab":
                assert candidate.batch_size == body["batch_size"]
            assert e.throughput_low <= e.throughput_samples_per_s <= e.throughput_high
        for rejection in answer.rejected:
            assert rejection.reasons
        ranks = [candidate.rank for candidate in answer.candidates]
        assert ranks == list(range(1, len(ranks) + 1))

    check()


def test_raising_the_budget_never_removes_a_feasible_candidate(api: Api, db: Database) -> None:
    lab_configs(api)

    @EXAMPLES
    @given(specs, st.floats(min_value=30, max_value=900), st.floats(min_value=0, max_value=900))
    def check(body: dict[str, Any], budget: float, more: float) -> None:
        body["constraints"] = {**body["constraints"], "power_budget_w": budget}
        low = ask(db, body)
        body["constraints"] = {**body["constraints"], "power_budget_w": budget + more}
        high = ask(db, body)
        # with the whole catalog modelled, more than `limit` may be feasible: compare complete lists only
        assume(len(high.candidates) < body["limit"])
        assert {key(c) for c in low.candidates} <= {key(c) for c in high.candidates}

    check()


def test_a_measured_config_is_always_shown_as_measured(api: Api, db: Database) -> None:
    lab_configs(api)
    measured_configs = {
        (hostname, r.task, r.runtime, r.precision, r.batch_size, r.threads)
        for hostname, (_part, rs) in LAB.items()
        for r in rs
    }

    @EXAMPLES
    @given(specs)
    def check(body: dict[str, Any]) -> None:
        answer = ask(db, body)
        shown: dict[tuple[Any, ...], set[EstimateKind]] = {}
        items: list[Candidate | Rejection] = [*answer.candidates, *answer.rejected]
        for item in items:
            if item.hardware.owned:
                k = (
                    item.hardware.machine_name,
                    answer.query.task,
                    item.runtime,
                    item.precision,
                    item.batch_size,
                    item.threads,
                )
                if item.estimate.power_basis is None or item.estimate.power_basis.value != "capped":
                    shown.setdefault(k, set()).add(item.estimate.kind)
        for k, kinds in shown.items():
            if k in measured_configs:
                assert kinds == {EstimateKind.measured}, (k, kinds)

    check()
