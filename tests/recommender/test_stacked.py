"""A runtime a lab device never ran is told from its own eager fp32 figure times the stack factor the
lab's other devices measured, where nothing else can speak for it (a CPU the catalog cannot name)."""

from __future__ import annotations

from testkit.factories import Api, run_report
from testkit.lab import cpu_machine, measured
from tests.recommender.test_recommend import ask


def test_a_runtime_measured_on_one_cpu_informs_another_through_its_stack_factor(api: Api) -> None:
    on_cpu = {"device": "cpu", "threads": 4, "power_source": "rapl"}
    for hostname, results in (
        ("node-both", [measured(8, 10, 90, runtime="torch-eager", precision="fp32", **on_cpu),
                       measured(8, 25, 90, runtime="openvino", precision="fp32", **on_cpu)]),
        ("node-eager", [measured(8, 12, 90, runtime="torch-eager", precision="fp32", **on_cpu)]),
    ):  # fmt: skip
        spec = cpu_machine(hostname)
        _machine_id, token = api.enroll(spec)
        assert api.post_run(token, run_report(spec, results=results)).status_code == 201
    answer = ask(api, batch_size=8, constraints={"runtimes": ["openvino"]})
    by_host = {c["hardware"]["machine_name"]: c for c in answer["candidates"]}
    assert by_host["node-both"]["estimate"]["kind"] == "measured"
    told = by_host["node-eager"]["estimate"]
    assert told["kind"] == "predicted" and told["throughput_samples_per_s"] == 12 * 2.5
    assert told["why"][0]["code"] == "runtime_stack" and told["error_pct"] == 75
    assert "x2.50, the stack factor measured beside fp32 torch-eager on 1 other lab device(s)" in told["explanation"]
