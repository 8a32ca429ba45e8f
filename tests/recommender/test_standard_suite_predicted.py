"""Every GPU config the standard suite measures is answered for a catalog GPU nobody in the lab owns,
through the predictions API a user (and the held-out GPU checks) call: a predicted figure with a band,
or, where hwadvisor's reference runs measured the part (the H100 and H200), that measurement under
its source."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from app.bench.suites import load_suite
from testkit.factories import Api, h100_spec

PARTS = ("a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb")
REFERENCE = {
    "h100-sxm5-80gb": "reference:hwadvisor-h100-sxm5-80gb",
    "h200-sxm-141gb": "reference:hwadvisor-h200-sxm-141gb",
}


def gpu_configs() -> list[Any]:
    return [c for c in load_suite("standard").configs(h100_spec()) if c.device.startswith("cuda") and c.task]


@pytest.mark.parametrize("part", PARTS)
def test_every_standard_gpu_config_is_predicted_for_a_gpu_the_lab_lacks(api: Api, part: str) -> None:
    headers = api.bearer(api.token("readonly"))
    kinds: Counter[str] = Counter()
    for c in gpu_configs():
        body = {
            "catalog_id": part,
            "workload": c.workload,
            "task": c.task.value,
            "runtime": c.runtime,
            "precision": c.precision.value,
            "batch_size": c.batch_size,
        }
        response = api.client.post("/api/v1/predictions", json=body, headers=headers)
        assert response.status_code == 200, (body, response.text)
        e = response.json()
        kinds[e["kind"]] += 1
        assert e["kind"] == "predicted" or (e["kind"] == "measured" and e["source"] == REFERENCE.get(part)), (body, e)
        assert e["throughput_samples_per_s"] > 0 and e["throughput_low"] < e["throughput_samples_per_s"]
        assert e["throughput_samples_per_s"] < e["throughput_high"], body
        assert e["explanation"], body
    assert kinds["predicted"] + kinds["measured"] >= 250  # 11 workloads x 2 tasks x 4 precisions x 3 batches, and more
    assert (kinds["measured"] > 0) is (part in REFERENCE)
