"""benchmarks/pairs_sweep.py's checks on a slice of the catalog through the API: what an expert would flag
in a lab's answers before it has measured anything (a calibration carried from the wrong batch or regime,
a refusal that does not say why)."""

from __future__ import annotations

from benchmarks.pairs_sweep import Answer, ask_all, falls, flags
from testkit.factories import Api

ASKED = [
    ("mobilenet_v2", "train", "bf16"),
    ("mobilenet_v2", "train", "fp32"),
    ("resnet18", "train", "bf16"),
    ("resnet50", "infer", "fp16"),
    ("resnet50", "infer", "bf16"),
    ("resnet50", "infer", "int8"),
    ("lstm", "train", "fp16"),
    ("lstm", "train", "bf16"),
]


def test_a_lab_that_measured_nothing_gets_no_answer_an_expert_would_flag(api: Api) -> None:
    headers = api.bearer(api.token("readonly"))
    answers = ask_all(
        api.client, headers, ["a10", "a100-pcie-40gb", "h100-pcie-80gb"], (1, 32, 256), "torch-eager", ASKED
    )
    assert {a.status for a in answers} == {200, 404}
    assert flags(answers) == []
    # the A10 is device-bound from batch 32, where the H100 run was the host's: no longer faster there than at 256
    a10 = {a.batch: a for a in answers if a.part == "a10" and a.workload == "mobilenet_v2" and a.precision == "bf16"}
    assert a10[256].throughput >= 0.9 * a10[32].throughput


def test_the_checks_flag_what_they_say() -> None:
    def answer(
        precision: str,
        batch: int,
        throughput: float,
        factor: float,
        kind: str = "predicted",
        host_ms: float = 1.0,
        memory_ms: float = 4.0,
    ) -> Answer:
        figures = {"factor": factor, "host_ms": host_ms, "compute_ms": 1.0, "memory_ms": memory_ms}
        why = [{"code": "modelled", "figures": figures}]
        body = {"kind": kind, "source": "model", "throughput_samples_per_s": throughput, "error_pct": 30.0, "why": why}
        return Answer("a10", "resnet50", "infer", precision, batch, 200, body)

    fell = [answer("bf16", 32, 1000.0, 1.0), answer("bf16", 256, 700.0, 0.7)]
    assert len(flags(fell)) == 1 and len(falls(fell)) == 1
    own_curve = [answer("bf16", 32, 1000.0, 0.7), answer("bf16", 256, 800.0, 0.7)]
    assert flags(own_curve) == [] and len(falls(own_curve)) == 1
    # the factor fell from a host-heavy step to the device's, and the model's device time per sample grew by
    # more (its cache term): the model's own curve, printed, not flagged (an RTX 4090's MobileNet-v2 training)
    cached = [answer("fp32", 32, 987.0, 0.79, memory_ms=20.1), answer("fp32", 256, 851.0, 0.67, memory_ms=259.4)]
    assert flags(cached) == [] and len(falls(cached)) == 1
    flat = [answer("fp32", 32, 987.0, 0.79, memory_ms=20.1), answer("fp32", 256, 851.0, 0.67, memory_ms=191.6)]
    assert len(flags(flat)) == 1
    twins = [answer("bf16", 1, 200.0, 1.0), answer("fp16", 1, 400.0, 2.0)]
    assert len(flags(twins)) == 1
    assert flags([twins[0], answer("fp16", 1, 400.0, 2.0, kind="measured")]) == []
    slower_tf32 = [answer("fp32", 256, 1000.0, 0.8), answer("tf32", 256, 780.0, 0.43)]
    assert len(flags(slower_tf32)) == 1
    # the host's step (ResNet-50 at batch 1 on an H100 measured tf32 below fp32): not flagged
    assert flags([answer("fp32", 1, 300.0, 1.0, host_ms=3.0), answer("tf32", 1, 260.0, 1.0, host_ms=3.0)]) == []
    refused = Answer("a10", "resnet50", "infer", "int8", 1, 404, {"detail": "the model cannot predict it: None (do x)"})
    assert len(flags([refused])) == 1
