"""The lab's calibration of language-model steps: the modelled step's parts weighed apart, or one factor."""

from __future__ import annotations

import pytest

from app.catalog import get
from app.contracts import LLM_PRESETS, Precision, Task
from app.perfmodel import generation
from app.perfmodel.generation import COMPONENTS, LlmCalibration, fit_weights

SHAPE = LLM_PRESETS["llama_135m"].shape


def test_weights_the_measurements_were_made_with_are_recovered() -> None:
    truth = [1.5, 3.0, 60.0, 0.5]
    parts = [[0.01 * i, 0.02 + 0.003 * (i % 3), 0.0005 * i * i, 0.003 + 0.001 * (i % 2)] for i in range(1, 9)]
    measured = [sum(w * p for w, p in zip(truth, row, strict=True)) for row in parts]
    assert fit_weights(parts, measured) == pytest.approx(truth, rel=1e-6)


def test_weights_are_never_negative() -> None:
    parts = [[1.0, 0.0, 0.0, 1.0], [2.0, 0.0, 0.0, 1.0], [3.0, 0.0, 0.0, 1.0], [4.0, 0.0, 0.0, 1.0]]
    measured = [4.0, 3.0, 2.0, 1.0]  # falls as compute grows: no non-negative sum makes that
    assert min(fit_weights(parts, measured)) >= 0


def test_a_precision_weighed_apart_uses_its_weights_and_the_others_the_factor() -> None:
    cpu = get("epyc-9654")
    plain = generation.step(SHAPE, Task.decode, Precision.bf16, 4, 1024, cpu, llm_calibration=LlmCalibration())
    assert plain is not None and len(plain.parts) == len(COMPONENTS)
    assert sum(plain.parts) == pytest.approx(plain.seconds)  # a CPU adds host and device time
    assert plain.parts[2] > 0  # decode reads a KV cache
    tuned = LlmCalibration(factors={"cpu/decode": 2.0}, weights={"cpu/decode/bf16": [1.0, 1.0, 10.0, 1.0]})
    weighed = generation.step(SHAPE, Task.decode, Precision.bf16, 4, 1024, cpu, llm_calibration=tuned)
    assert weighed is not None
    assert weighed.seconds == pytest.approx(sum(plain.parts) + 9 * plain.parts[2])
    scaled = generation.step(SHAPE, Task.decode, Precision.fp32, 4, 1024, cpu, llm_calibration=tuned)
    fp32 = generation.step(SHAPE, Task.decode, Precision.fp32, 4, 1024, cpu, llm_calibration=LlmCalibration())
    assert scaled is not None and fp32 is not None
    assert scaled.seconds == pytest.approx(2 * fp32.seconds) and scaled.factor == pytest.approx(2.0)
