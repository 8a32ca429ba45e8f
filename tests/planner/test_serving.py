"""Serving a language model: memory rules (weights + KV cache per device), tensor parallelism, the
SLOs, and the figures' arithmetic, through the API as a user asks and in process."""

from __future__ import annotations

from typing import Any

import pytest

from app.catalog import load
from app.contracts import LLM_PRESETS, Precision, ServingRequest, Task
from app.perfmodel import generation
from app.planner.serving import _needed, plan_over
from testkit.factories import Api
from tests.conftest import ONE_BACKEND

CATALOG = {h.id: h for h in load()}
GB = 1e9
ONE_DB = pytest.mark.parametrize("database_url", ONE_BACKEND, indirect=True)
"""The serving planner's subject is not the database: the API tests run on one backend."""


def ask(api: Api, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    response = api.client.post("/api/v1/plans/serving", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == status, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_an_8b_model_with_a_32k_context_at_batch_16_does_not_fit_one_24_gb_card() -> None:
    """bf16 weights 16.1 GB + KV cache 16 x 32,768 x 128 KiB = 68.7 GB: 85 GB, on a 24 GB RTX 4090."""
    shape = LLM_PRESETS["llama3_8b"].shape
    request = ServingRequest(
        workload="llama3_8b",
        prompt_tokens=32_000,
        output_tokens=768,
        concurrency=16,
        hardware=["rtx-4090"],
        cluster={"devices_per_system": 1, "max_devices": 1},
    )
    needed = _needed(shape, Precision.bf16, 16, request, 1)
    assert needed.weights == pytest.approx(16.06e9, rel=0.01)
    assert needed.kv_cache == pytest.approx(16 * 32_768 * 131_072, rel=1e-6)
    assert needed.total > 24 * GB
    answer = plan_over(CATALOG, request)
    assert not answer.candidates
    (refused,) = answer.rejected
    memory = [r for r in refused.reasons if r.code == "kv_out_of_memory"]
    assert memory and memory[0].figures["memory_gb"] == 24
    assert float(memory[0].figures["needed_gb"] or 0) > 24 and "KV cache" in memory[0].text


@ONE_DB
def test_a_70b_model_in_bf16_needs_at_least_two_h100s(api: Api) -> None:
    answer = ask(api, {"workload": "llama3_70b", "concurrency": 4, "hardware": ["h100-sxm5-80gb"]})
    (h100,) = answer["candidates"]
    assert h100["tensor_parallel"] >= 2 and h100["devices"] >= 2
    assert h100["memory_needed_gb"] <= h100["memory_gb"] * 0.9
    assert any(n["code"] == "tensor_parallel" and n["figures"]["whole_gb"] > 140 for n in h100["notes"])
    one = ask(api, {"workload": "llama3_70b", "hardware": ["h100-sxm5-80gb"], "cluster": {"max_devices": 1}})
    assert not one["candidates"]
    (refused,) = one["rejected"]
    (memory,) = refused["reasons"]
    assert memory["code"] == "kv_out_of_memory" and memory["figures"]["weights_gb"] == pytest.approx(141.1, rel=0.01)


@ONE_DB
def test_a_70b_model_in_weight_only_int4_fits_one_h100_and_decodes_faster(api: Api) -> None:
    """Q4_0 stores 18 bytes per 32 weights: 70.6 B parameters are 39.7 GB, which one 80 GB card holds;
    decode reads every weight once a step, so at the same batch it takes well under bf16's time."""
    one = {"workload": "llama3_70b", "concurrency": 1, "hardware": ["h100-sxm5-80gb"], "cluster": {"max_devices": 1}}
    answer = ask(api, {**one, "precisions": ["int4", "bf16"]})
    (h100,) = answer["candidates"]
    assert h100["precision"] == "int4" and h100["devices"] == 1 and h100["tensor_parallel"] == 1
    assert h100["memory_needed_gb"] == pytest.approx(39.7 + 0.3, abs=1.5)
    assert [r["precision"] for r in answer["rejected"]] == ["bf16"]
    assert any("weight-only" in a and "check the model's quality" in a for a in answer["assumptions"])

    shape, h100_part = LLM_PRESETS["llama3_70b"].shape, CATALOG["h100-sxm5-80gb"]
    steps = {
        p: generation.step(shape, Task.decode, p, 8, 2048, h100_part, shards=2, runtime="torch-compile")
        for p in (Precision.bf16, Precision.int8, Precision.int4)
    }
    seconds = {p: s.seconds for p, s in steps.items() if s is not None}
    assert seconds[Precision.int4] < seconds[Precision.int8] < seconds[Precision.bf16]
    assert 1.5 < seconds[Precision.bf16] / seconds[Precision.int4] < 2 / (18 / 32)  # never more than the bytes saved
    assert steps[Precision.int4] is not None and steps[Precision.bf16] is not None
    assert steps[Precision.int4].breakdown.flops == pytest.approx(steps[Precision.bf16].breakdown.flops, rel=1e-9)


@ONE_DB
def test_a_recommendation_for_weight_only_int4_says_where_it_is_measured_and_predicted(api: Api) -> None:
    body = {"workload": "llama_135m", "task": "decode", "scope": "catalog", "constraints": {"precisions": ["int4"]}}
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert not answer["candidates"]
    assert any("runtime llama-cpp" in n and "plan-serving llama_135m --precision int4" in n for n in answer["notes"])
    body["constraints"] = {"precisions": ["bf16"]}
    response = api.client.post("/api/v1/recommendations", json=body, headers=api.bearer(api.token("readonly")))
    assert not any("weight-only" in n for n in response.json()["notes"])


@ONE_DB
def test_the_figures_are_the_steps_and_the_costs(api: Api) -> None:
    body = {
        "workload": "llama3_8b",
        "prompt_tokens": 2000,
        "output_tokens": 200,
        "concurrency": 32,
        "hardware": ["h100-sxm5-80gb", "l40s"],
        "costs": {"cloud_usd_per_device_hour": {"h100-sxm5-80gb": 2.5}},
    }
    answer = ask(api, body)
    assert {c["hardware"]["catalog_id"] for c in answer["candidates"]} == {"h100-sxm5-80gb", "l40s"}
    for c in answer["candidates"]:
        assert c["concurrency"] >= 32 and c["devices"] == c["tensor_parallel"] * c["replicas"]
        assert c["tpot_ms"] >= c["decode_step_ms"] and c["kind"] == "predicted"
        assert c["output_tokens_per_s_per_sequence"] == pytest.approx(1000 / c["tpot_ms"])
        assert c["output_tokens_per_s"] == pytest.approx(c["requests_per_s"] * 200)
        if c["output_tokens_per_j"] is not None:
            assert c["output_tokens_per_j"] == pytest.approx(c["output_tokens_per_s"] / c["system_power_w"])
        seconds = c["costs"]["running_hours"] * 3600
        if c["usd_per_million_tokens"] is not None:
            per_token = c["costs"]["total_usd"] / (c["output_tokens_per_s"] * seconds)
            assert c["usd_per_million_tokens"] == pytest.approx(per_token * 1e6)
        shape = LLM_PRESETS["llama3_8b"].shape
        step = generation.step(
            shape,
            Task.prefill,
            Precision(c["precision"]),
            1,
            2000,
            CATALOG[c["hardware"]["catalog_id"]],
            shards=c["tensor_parallel"],
            runtime=c["runtime"],
        )
        assert step is not None and c["ttft_ms"] == pytest.approx(step.seconds * 1000)
    (h100,) = [c for c in answer["candidates"] if c["hardware"]["catalog_id"] == "h100-sxm5-80gb"]
    assert h100["cloud_usd_per_million_tokens"] == pytest.approx(
        2.5 * h100["devices"] / (h100["output_tokens_per_s"] * 3600) * 1e6
    )


@ONE_DB
def test_slos_reject_with_the_figures_and_a_looser_one_admits(api: Api) -> None:
    tight = ask(api, {"workload": "llama3_8b", "tpot_slo_ms": 0.01, "hardware": ["h100-sxm5-80gb"]})
    assert not tight["candidates"]
    (reason,) = tight["rejected"][0]["reasons"]
    assert reason["code"] == "over_tpot_slo" and "0.01 ms SLO" in reason["text"]
    ttft = ask(api, {"workload": "llama3_8b", "prompt_tokens": 8000, "ttft_slo_ms": 1, "hardware": ["l40s"]})
    assert ttft["rejected"][0]["reasons"][0]["code"] == "over_ttft_slo"
    loose = ask(api, {"workload": "llama3_8b", "tpot_slo_ms": 10_000, "ttft_slo_ms": 60_000, "hardware": ["l40s"]})
    assert loose["candidates"]


@ONE_DB
def test_a_custom_shape_is_served_and_a_request_rate_sets_the_copies(api: Api) -> None:
    shape = {"layers": 4, "hidden": 512, "heads": 8, "kv_heads": 2, "intermediate": 1024, "vocabulary": 1000}
    answer = ask(api, {"shape": shape, "name": "mine", "request_rate_per_s": 50, "hardware": ["l40s"]})
    (c,) = answer["candidates"]
    assert c["requests_per_s"] >= 50 and c["tensor_parallel"] == 1
    assert answer["shape"]["layers"] == 4


@ONE_DB
def test_bad_questions_are_refused_with_what_to_do(api: Api) -> None:
    both = ask(api, {"workload": "llama3_8b", "concurrency": 2, "request_rate_per_s": 1}, status=422)
    assert "at most one of concurrency" in both["detail"] or "at most one of concurrency" in str(both)
    unknown = ask(api, {"workload": "resnet50"}, status=422)
    assert "llama3_8b" in str(unknown)
    tf32 = ask(api, {"workload": "llama3_8b", "precisions": ["tf32"]}, status=422)
    assert "bf16" in str(tf32) and "int4" in str(tf32)


def test_a_calibrated_decode_draws_at_the_rate_it_is_stated_at(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lab whose runs say its GPUs decode 1.25x as fast as the model: the plan's step is shortened so,
    and its power is the draw of a device moving its bytes 1.25x as fast (as the recommender takes a
    calibrated figure's), not the bare model's."""
    from app.perfmodel import power as power_model

    request = ServingRequest(workload="llama3_8b", concurrency=8, hardware=["h100-sxm5-80gb"])

    def planned(calibration: generation.LlmCalibration) -> tuple[float, float, Any]:
        monkeypatch.setattr(generation, "shipped", lambda: calibration)
        (c,) = plan_over(CATALOG, request).candidates
        assert c.power_w is not None
        return c.decode_step_ms, c.power_w, c

    bare_ms, bare_w, _ = planned(generation.LlmCalibration())
    lab = generation.LlmCalibration(factors={"gpu/decode": 0.8}, bands={"gpu/decode": 0.2})
    fast_ms, fast_w, fast = planned(lab)
    assert fast_ms == pytest.approx(bare_ms * 0.8, rel=0.02)
    context = request.prompt_tokens + request.output_tokens // 2  # the planner's mean context while decoding
    shape, h100 = LLM_PRESETS["llama3_8b"].shape, CATALOG["h100-sxm5-80gb"]
    batch = fast.batch_per_replica
    # the bare step's utilisation (its breakdown), which the calibrated step's rate raises
    decode = generation.step(shape, Task.decode, Precision.bf16, batch, context, h100, runtime="torch-compile")
    assert decode is not None
    at_rate = power_model.estimate(
        h100,
        min(1.0, decode.breakdown.utilisation_compute / 0.8),
        min(1.0, decode.breakdown.utilisation_memory / 0.8),
    )
    assert fast_w == pytest.approx(at_rate.power_w, rel=0.02) and fast_w > bare_w
    # twice as fast would read the 16 GB of weights faster than the H100's memory can: held there, and said
    _, _, held = planned(generation.LlmCalibration(factors={"gpu/decode": 0.5}, bands={"gpu/decode": 0.2}))
    weights = 16.06e9 / (CATALOG["h100-sxm5-80gb"].memory_bandwidth_gb_s or 0) / 1e9 * 1000
    assert held.decode_step_ms > weights > bare_ms * 0.5
    (note,) = [n for n in held.notes if n.code == "llm_modelled"]
    assert "and no less: the weights and KV cache a decode step reads take that long" in note.text


@ONE_DB
def test_serving_costs_out_of_reason_are_a_422(api: Api) -> None:
    """Each was a 500: an infinite cost failed the answer's own validation."""
    ask(api, {"workload": "llama3_8b", "costs": {"utilisation": 5e-324}}, status=422)
    ask(api, {"workload": "llama3_8b", "costs": {"cloud_usd_per_device_hour": {"h100-sxm5-80gb": 1e308}}}, status=422)
    costs = {"utilisation": 0.001, "cloud_usd_per_device_hour": {"h100-sxm5-80gb": 100_000}}
    assert ask(api, {"workload": "llama3_8b", "costs": costs})["candidates"]
