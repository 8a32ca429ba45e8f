"""The zoo: published parameter counts, FLOP counts, shapes, and that each model really trains."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils.flop_counter import FlopCounterMode

from app.bench.workloads import count_parameters, get_workload, workloads
from app.bench.workloads.bert_base import BertBaseWorkload
from app.bench.workloads.bert_large_squad import BertLargeSquadWorkload
from app.bench.workloads.gnmt import RECURRENT_FLOPS
from app.bench.workloads.llama import LlmWorkload

PUBLISHED = {
    "resnet50": 25_557_032,  # torchvision resnet50 (v1.5)
    "alexnet": 61_100_840,  # torchvision alexnet
    "mobilenet_v2": 3_504_872,  # torchvision mobilenet_v2
    "resnet56": 853_018,  # He et al. 2016, CIFAR-10 (0.85M), option A shortcuts
    "resnet20": 269_722,  # He et al. 2016, CIFAR-10 (0.27M), option A shortcuts
    "resnet18": 11_689_512,  # torchvision resnet18
    "distilbert": 66_362_880 + 768 * 2 + 2,  # DistilBertModel (distilbert-base-uncased) + the span head
    "gnmt": 160_671_297,  # NVIDIA DeepLearningExamples GNMT v2, as MLBench's blog (2020-10-02) counts it
    "llama_135m": 134_515_008,  # HuggingFaceTB/SmolLM-135M
    "llama_360m": 361_821_120,  # HuggingFaceTB/SmolLM-360M
    "llama3_1b": 1_235_814_400,  # meta-llama/Llama-3.2-1B
    "llama3_3b": 3_212_749_824,  # meta-llama/Llama-3.2-3B
    "llama3_8b": 8_030_261_248,  # meta-llama/Llama-3.1-8B
    "llama3_70b": 70_553_706_496,  # meta-llama/Llama-3.1-70B
}
RECURRENT = {"lstm": 2 * 4 * (256 + 256) * 256 * 32 * 2, "gnmt": RECURRENT_FLOPS}
"""The LSTM layers' gate GEMMs, which torch's FLOP counter cannot see (an LSTM layer is one fused kernel)."""
NAMES = workloads.names()


@pytest.mark.parametrize("name", NAMES)
def test_parameter_count_is_the_declared_one(name: str) -> None:
    """Language models are built on the meta device (shapes, no memory): a 70B model has 282 GB of weights."""
    workload = get_workload(name)
    if isinstance(workload, LlmWorkload):
        with torch.device("meta"):
            model = workload.make()
    else:
        model = workload.make()
    assert count_parameters(model) == workload.info.parameters
    if name in PUBLISHED:
        assert workload.info.parameters == PUBLISHED[name]


def test_bert_encoder_matches_the_reference_implementation() -> None:
    model = BertBaseWorkload().make()
    assert count_parameters(model.bert) == 109_482_240  # reference BertModel, bert-base-uncased


@pytest.mark.slow
def test_bert_large_encoder_matches_the_reference_implementation() -> None:
    model = BertLargeSquadWorkload().make()
    assert count_parameters(model.bert) == 335_141_888  # reference BertModel, bert-large-uncased


@pytest.mark.parametrize("name", NAMES)
def test_flops_per_sample_is_what_torch_counts(name: str) -> None:
    """Counted on fake tensors (shapes without data): the count needs no arithmetic."""
    workload = get_workload(name)
    with FakeTensorMode():
        model, inputs = workload.make().eval(), workload.inputs(1)
        with torch.inference_mode(), FlopCounterMode(display=False) as counter:
            model(*inputs)
    counted = counter.get_total_flops()
    assert workload.info.flops_per_sample == counted + RECURRENT.get(name, 0)


@pytest.mark.parametrize("name", NAMES)
def test_output_shape_and_the_model_trains(name: str) -> None:
    workload = get_workload(name)
    model = workload.make("tiny").train()
    inputs, targets = workload.inputs(4, "tiny"), workload.targets(4, "tiny")
    output = model(*inputs)
    assert output.shape[0] == 4 and torch.isfinite(output).all()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(8):
        optimizer.zero_grad()
        loss = workload.loss(model(*inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses


def test_random_weights_are_the_same_on_every_machine() -> None:
    first, second = get_workload("fcn_r").make(), get_workload("fcn_r").make()
    assert all(torch.equal(a, b) for a, b in zip(first.parameters(), second.parameters(), strict=True))
