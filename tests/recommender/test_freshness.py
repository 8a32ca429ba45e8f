"""An answer's table of estimates is kept between asks (app/recommender/options.py): whatever the
answer reads changes, the next ask sees it, never a stale table."""

from __future__ import annotations

from typing import Any

from testkit.factories import Api, run_report
from testkit.lab import build, gpu_machine, measured
from tests.recommender.test_recommend import ask

SPEC: dict[str, Any] = {"batch_size": 64, "constraints": {"precisions": ["bf16"]}}


def machines(answer: dict[str, Any]) -> list[str]:
    return [c["hardware"]["machine_name"] for c in answer["candidates"]]


def test_a_result_uploaded_after_an_answer_is_in_the_next_one(api: Api) -> None:
    build(api)
    before = ask(api, **SPEC)
    assert ask(api, **SPEC) == before  # asked again with nothing new: the same answer
    spec = gpu_machine("h100-sxm5-80gb", "node-h100-new")
    _machine_id, token = api.enroll(spec)
    assert api.post_run(token, run_report(spec, results=[measured(64, 9000, 600)])).status_code == 201
    after = ask(api, **SPEC)
    assert "node-h100-new" not in machines(before)
    assert machines(after)[0] == "node-h100-new"
    assert after["candidates"][0]["estimate"]["throughput_samples_per_s"] == 9000


def test_a_retired_machine_leaves_the_next_answer(api: Api) -> None:
    ids = build(api)
    assert "node-l4" in machines(ask(api, **SPEC))
    retired = api.client.post(f"/api/v1/machines/{ids['node-l4']}/retire", headers=api.admin)
    assert retired.status_code == 200, retired.text
    assert "node-l4" not in machines(ask(api, **SPEC))
