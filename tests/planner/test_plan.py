"""Plans on the shipped catalog: memory fit, device counts, the whole system's constraints, through
the API a procurement tool calls and in process for the properties (hypothesis)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.contracts import Plan, PlanRequest
from app.db.engine import Database
from app.planner import plan
from app.planner.engine import needed_throughput
from testkit.factories import Api
from tests.conftest import ONE_BACKEND

pytestmark = pytest.mark.parametrize("database_url", ONE_BACKEND, indirect=True)
"""The planner's subject is not the database (the recommender's table under it is tested on both)."""

EXAMPLES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BIG = {"name": "big", "flops_per_sample": 1.4e14, "bytes_per_sample": 1.4e11, "parameters": 70_000_000_000}
IMAGENET = 1_281_167


def ask(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    response = api.client.post("/api/v1/plans", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def in_process(db: Database, body: dict[str, Any]) -> Plan:
    with db.reading() as session:
        return plan(session, PlanRequest.model_validate(body))


def on(answer: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [c for c in answer["candidates"] if c["hardware"]["name"] == name]


def test_a_70b_model_is_never_placed_whole_on_a_24_gb_card(api: Api) -> None:
    """bf16 inference holds 140 GB of weights: an RTX 3090 plan splits the layers over at least
    ceil(140 / 24) = 6 cards, each within its 24 GB. Training (12 bytes a parameter) needs 840 GB:
    sharded over at least 35 cards, and rejected with the figures when fewer are allowed."""
    infer = ask(api, {"custom": BIG, "task": "infer", "precisions": ["bf16"], "limit": 500})
    (rtx,) = on(infer, "NVIDIA GeForce RTX 3090")
    assert rtx["parallelism"] == "pipeline" and rtx["devices"] >= 6
    assert rtx["memory_needed_gb"] <= rtx["memory_gb"] == 24
    assert any(n["code"] == "sharded" and n["figures"]["whole_gb"] == pytest.approx(140) for n in rtx["notes"])
    for c in infer["candidates"]:
        if c["memory_gb"] is not None:
            assert c["memory_needed_gb"] <= c["memory_gb"]
            assert c["devices"] > 1 or c["memory_gb"] >= 140

    train = ask(api, {"custom": BIG, "task": "train", "precisions": ["bf16"], "limit": 500})
    (rtx,) = on(train, "NVIDIA GeForce RTX 3090")
    assert rtx["parallelism"] == "sharded_data_parallel" and rtx["devices"] >= 35
    assert rtx["memory_needed_gb"] <= 24

    fewer = ask(api, {"custom": BIG, "task": "train", "precisions": ["bf16"], "cluster": {"max_devices": 32}})
    assert not on(fewer, "NVIDIA GeForce RTX 3090")
    (refused,) = [r for r in fewer["rejected"] if r["hardware"]["name"] == "NVIDIA GeForce RTX 3090"]
    (oom,) = refused["reasons"]
    assert oom["code"] == "out_of_memory" and oom["figures"]["needed_gb"] == pytest.approx(840, rel=0.01)
    assert "needs 840.0 GB" in oom["text"] and "has 24 GB" in oom["text"]


def test_devices_grow_with_the_target_and_the_throughput_reaches_it(db: Database) -> None:
    asked = {"workload": "resnet50", "batch_size": 256, "precisions": ["fp16"], "limit": 500}
    seen: dict[tuple[str, str], list[int]] = {}
    for target in (500, 2_000, 8_000, 20_000):
        answer = in_process(db, {**asked, "target": {"throughput_samples_per_s": target}})
        assert answer.candidates
        for c in answer.candidates:
            assert c.throughput_samples_per_s >= target
            seen.setdefault((c.hardware.name, c.runtime), []).append(c.devices)
    grown = [counts for counts in seen.values() if len(counts) == 4]
    assert grown and all(counts == sorted(counts) for counts in grown)
    assert any(counts[-1] > counts[0] for counts in grown)


def test_a_training_job_is_timed_and_a_deadline_adds_devices(api: Api) -> None:
    job = {"dataset_samples": IMAGENET, "epochs": 90}
    asked = {"workload": "resnet50", "batch_size": 256, "precisions": ["fp16"], "limit": 500}
    free = {(c["hardware"]["name"], c["runtime"]): c for c in ask(api, {**asked, "target": {"job": job}})["candidates"]}
    rushed = ask(api, {**asked, "target": {"job": {**job, "deadline_hours": 4}}})
    assert rushed["candidates"]
    for c in rushed["candidates"]:
        hours = c["job"]["time_to_train_hours"]
        assert hours <= 4
        assert hours == pytest.approx(IMAGENET * 90 / c["throughput_samples_per_s"] / 3600)
        alone = free[(c["hardware"]["name"], c["runtime"])]
        assert alone["devices"] == 1 and c["devices"] >= alone["devices"]
    late = [r for r in rushed["rejected"] if r["reasons"][0]["code"] == "misses_deadline"]
    assert late and all("past the 4 h deadline" in r["reasons"][0]["text"] for r in late)


def test_several_devices_scale_by_the_model_not_by_n_times_one(api: Api) -> None:
    answer = ask(
        api,
        {
            "workload": "resnet50",
            "batch_size": 256,
            "precisions": ["fp16"],
            "target": {"throughput_samples_per_s": 15_000},
            "objective": "fastest",
            "limit": 500,
        },
    )
    several = [c for c in answer["candidates"] if c["devices"] > 8]
    assert several, "a 15,000/s target takes more than one system of GPUs"
    for c in several:
        one = c["estimate"]["throughput_samples_per_s"]
        assert c["systems"] >= 2 and c["parallelism"] == "data_parallel"
        assert c["throughput_samples_per_s"] < c["devices"] * one
        assert c["scaling_efficiency"] == pytest.approx(c["throughput_samples_per_s"] / (c["devices"] * one))
        assert c["error_pct"] > c["estimate"]["error_pct"]
        (note,) = [n for n in c["notes"] if n["code"] == "data_parallel"]
        assert "network" in note["figures"]["link"]


requests = st.fixed_dictionaries(
    {
        "workload": st.just("resnet50"),
        "task": st.sampled_from(["infer", "train"]),
        "batch_size": st.none() | st.sampled_from([1, 32, 256]),
        "objective": st.sampled_from(["cheapest", "fastest", "least_energy"]),
        "power_budget_w": st.none() | st.floats(min_value=50, max_value=800),
        "system_power_budget_w": st.none() | st.floats(min_value=300, max_value=20_000),
        "max_price_usd": st.none() | st.floats(min_value=2_000, max_value=500_000),
        "device_kinds": st.none() | st.sampled_from([["cuda"], ["cpu"], ["cpu", "cuda"]]),
        "limit": st.just(500),
        "cluster": st.fixed_dictionaries({"max_devices": st.integers(min_value=1, max_value=128)}),
        "costs": st.fixed_dictionaries({"system_usd": st.sampled_from([0.0, 15_000.0])}),
        "target": st.sampled_from(["none", "throughput", "job", "serving"]),
        "amount": st.floats(min_value=10, max_value=50_000),
        "slo": st.none() | st.floats(min_value=1, max_value=2_000),
    }
)


def _request(drawn: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in drawn.items() if k not in ("target", "amount", "slo")}
    kind, amount = drawn["target"], drawn["amount"]
    if kind == "throughput":
        body["target"] = {"throughput_samples_per_s": amount}
    elif kind == "job":
        body["task"] = "train"
        body["target"] = {"job": {"dataset_samples": IMAGENET, "epochs": 10, "deadline_hours": 1e6 / amount}}
    elif kind == "serving":
        body["task"] = "infer"
        body["target"] = {"serving": {"request_rate_per_s": amount, "latency_p99_slo_ms": drawn["slo"]}}
    return body


def test_no_plan_breaks_a_stated_constraint(db: Database) -> None:
    @EXAMPLES
    @given(requests)
    def check(drawn: dict[str, Any]) -> None:
        answer = in_process(db, _request(drawn))
        q = answer.query
        needed = needed_throughput(q)
        for c in answer.candidates:
            slack = 1 + 1e-9
            assert c.devices <= q.cluster.max_devices
            if needed is not None:
                assert c.throughput_samples_per_s >= needed / slack
            if q.power_budget_w is not None:
                assert c.power_w is not None and c.power_w <= q.power_budget_w * slack
            if q.system_power_budget_w is not None:
                assert c.system_power_w is not None and c.system_power_w <= q.system_power_budget_w * slack
            if q.max_price_usd is not None:
                assert c.costs.purchase_usd is not None and c.costs.purchase_usd <= q.max_price_usd * slack
            if c.memory_gb is not None and c.memory_needed_gb is not None:
                assert c.memory_needed_gb <= c.memory_gb * slack
            if q.target.serving is not None and q.target.serving.latency_p99_slo_ms is not None:
                assert c.latency_p99_ms is not None and c.latency_p99_ms <= q.target.serving.latency_p99_slo_ms * slack
            if q.target.job is not None and q.target.job.deadline_hours is not None:
                assert c.job is not None and c.job.time_to_train_hours <= q.target.job.deadline_hours * slack
            assert c.scaling_efficiency <= 1 + 1e-9
            assert q.device_kinds is None or c.hardware.kind in q.device_kinds
            if c.price is not None:
                bought = c.devices * c.price.usd + c.systems * q.costs.system_usd
                assert c.costs.purchase_usd == pytest.approx(bought)
            if c.system_power_w is not None:
                assert c.costs.energy_kwh == pytest.approx(c.system_power_w / 1000 * c.costs.running_hours)
        assert q.device_kinds is None or all(r.hardware.kind in q.device_kinds for r in answer.rejected)
        ranks = [c.rank for c in answer.candidates]
        assert ranks == list(range(1, len(ranks) + 1))

    check()


def test_bad_plans_are_refused_with_the_field(api: Api) -> None:
    both = {"workload": "resnet50", "target": {"throughput_samples_per_s": 10, "job": {"dataset_samples": 10}}}
    response = api.client.post("/api/v1/plans", json=both, headers=api.admin)
    assert response.status_code == 422 and "at most one target" in response.text
    serving_train = {"workload": "resnet50", "task": "train", "target": {"serving": {"request_rate_per_s": 5}}}
    response = api.client.post("/api/v1/plans", json=serving_train, headers=api.admin)
    assert response.status_code == 422 and "serving target needs task 'infer'" in response.text
    assert api.client.post("/api/v1/plans", json={"workload": "resnet50"}).status_code == 401


def test_an_inference_plan_with_eager_gpus_beside_graph_runtime_cpus_says_so(api: Api) -> None:
    """The shipped data alone: OpenVINO's published CPU rows run a fused graph, every GPU is eager PyTorch.
    A plan for a request rate sizes both; its notes say they are not compared like with like."""
    body = {"workload": "resnet50", "task": "infer", "target": {"throughput_samples_per_s": 20_000}, "limit": 5}
    answer = ask(api, body)
    said = [n for n in answer["notes"] if n.startswith("every GPU figure here is eager PyTorch")]
    assert len(said) == 1 and "openvino" in said[0], answer["notes"]
    chosen = ask(api, {**body, "runtimes": ["torch-eager"]})
    assert not [n for n in chosen["notes"] if "every GPU figure" in n], "a plan that chose its runtime got it"


def test_costs_out_of_reason_are_a_422_and_extreme_valid_ones_an_answer(api: Api) -> None:
    """A utilisation of 5e-324 made a job's share of the period infinite, and a rate of 1e308 an infinite
    bill: both were 500s. The bounds refuse them; the largest valid inputs answer."""
    reader = api.bearer(api.token("readonly"))
    job = {"job": {"dataset_samples": IMAGENET, "epochs": 90}}
    for costs in ({"utilisation": 5e-324}, {"cloud_usd_per_device_hour": {"h100-sxm5-80gb": 1e308}}):
        body = {"workload": "resnet50", "target": job, "costs": costs}
        refused = api.client.post("/api/v1/plans", json=body, headers=reader)
        assert refused.status_code == 422, refused.text
    largest = {"dataset_samples": 10**13, "epochs": 100_000}
    costs = {"utilisation": 0.001, "period_years": 0.1, "cloud_usd_per_device_hour": {"h100-sxm5-80gb": 100_000}}
    answer = ask(api, {"workload": "resnet50", "target": {"job": largest}, "costs": costs})
    assert answer["candidates"]
