"""MLPerf Power rows come in pairs (performance, wall power) per submission, model and scenario: the
loader pairs them, reads what the model needs of the system, and says why it leaves the rest out."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from app.bench.workloads import workloads
from app.catalog import get
from app.perfmodel import mlperf_power
from app.perfmodel.mlperf_power import BERT_LARGE_384_FLOPS, Pair, compute_util, hardware, load, observation

ROOT = Path(__file__).resolve().parents[2]
DATASETS = next((p / "shared" / "datasets" for p in ROOT.parents if (p / "shared" / "datasets").is_dir()), None)
needs_datasets = pytest.mark.skipif(DATASETS is None, reason="../shared/datasets is absent")

COLUMNS = [
    "Public ID",
    "Organization",
    "SystemType",
    "SystemName",
    "Model",
    "Model MLC",
    "Scenario",
    "Result",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_per_node",
    "accelerator_model_name",
    "accelerators_per_node",
    "Software",
    "operating_system",
    "notes",
    "version",
    "date",
    "vdate",
    "Units",
    "Total Accelerators",
]


def _row(
    public_id: str, system: str, model: str, scenario: str, result: str, units: str, **other: str
) -> dict[str, str]:
    row = dict.fromkeys(COLUMNS, "")
    row.update(
        {
            "Public ID": public_id,
            "Organization": "Fujitsu",
            "SystemName": system,
            "Model": model,
            "Scenario": scenario,
            "Result": result,
            "Units": units,
            "number_of_nodes": "1.0",
            "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8352V CPU @ 2.10GHz",
            "host_processors_per_node": "2.0",
            "accelerator_model_name": "NVIDIA A100-SXM-80GB",
            "accelerators_per_node": "8",
            "Software": "TensorRT 8.4.2; CUDA 11.6",
            "version": "v2.1",
        }
    )
    row.update(other)
    return row


def _datasets(tmp_path: Path, rows: list[dict[str, str]]) -> Path:
    folder = tmp_path / "mlperf-power"
    folder.mkdir()
    for name in mlperf_power.FILES:
        with (folder / name).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            if name == mlperf_power.FILES[0]:
                writer.writerows(rows)
    (tmp_path / "codecarbon-cpu").mkdir()
    (tmp_path / "codecarbon-cpu" / "cpu_power.csv").write_text("Name,TDP\nIntel Xeon Platinum 8352V,195.0\n")
    return tmp_path


SYSTEM = "PRIMERGY GX2570M6 (8x A100-SXM-80GB; TensorRT)"


def test_a_performance_row_and_a_power_row_of_one_run_make_one_pair(tmp_path: Path) -> None:
    # 2.1-0019's ResNet Offline run, as the dataset has it
    rows = [
        _row("2.1-0019", SYSTEM, "ResNet", "Offline", "297046", "samples/s"),
        _row("2.1-0019", SYSTEM, "ResNet", "Offline", "3310.028742", "System Power (W)"),
        _row("2.1-0019", SYSTEM, "ResNet", "Server", "266066", "queries/s"),  # its power row is missing
        _row("2.1-0019", SYSTEM, "RNN-T", "Offline", "100", "samples/s"),  # a model without a FLOP count
        _row("9.9-0001", "Other", "ResNet", "Offline", "1,000.5", "Samples/s", accelerator_model_name="Acme X1"),
        _row("9.9-0001", "Other", "ResNet", "Offline", "2,000", "Watts", accelerator_model_name="Acme X1"),
    ]
    loaded = load(_datasets(tmp_path, rows))
    (pair,) = loaded.pairs
    assert (pair.public_id, pair.workload, pair.scenario) == ("2.1-0019", "resnet50", "Offline")
    assert (pair.samples_per_s, pair.system_power_w) == (297046.0, 3310.028742)
    assert (pair.accelerators, pair.host_sockets, pair.host_cpu_tdp_w) == (8, 2, 195.0)
    assert pair.catalog_id == "a100-sxm4-80gb" and not pair.maxq
    assert loaded.skipped == {"no single performance row and single power row": 1, "not an NVIDIA GPU": 1}


def test_a_run_with_two_different_power_figures_is_left_out(tmp_path: Path) -> None:
    rows = [
        _row("2.1-0019", SYSTEM, "ResNet", "Offline", "297046", "samples/s"),
        _row("2.1-0019", SYSTEM, "ResNet", "Offline", "3310.028742", "System Power (W)"),
        _row("2.1-0019", SYSTEM, "ResNet", "Offline", "3000", "System Power (W)"),
    ]
    loaded = load(_datasets(tmp_path, rows))
    assert not loaded.pairs and loaded.skipped == {"no single performance row and single power row": 1}


def test_stated_board_power_and_caps_are_read_from_the_notes(tmp_path: Path) -> None:
    rows = [
        _row("1.1-016", "XE8545", "ResNet", "Offline", "161361", "samples/s", notes="500W A100-SXM-80GB"),
        _row("1.1-016", "XE8545", "ResNet", "Offline", "2412.5", "System Power (W)", notes="500W A100-SXM-80GB"),
        _row(
            "2.0-032", "X (MaxQ)", "ResNet", "Offline", "1", "samples/s", notes="Maximum GPU power is limitted to 275W"
        ),
        _row(
            "2.0-032",
            "X (MaxQ)",
            "ResNet",
            "Offline",
            "2",
            "System Power (W)",
            notes="Maximum GPU power is limitted to 275W",
        ),
    ]
    by_id = {p.public_id: p for p in load(_datasets(tmp_path, rows)).pairs}
    assert by_id["1.1-016"].stated_tdp_w == 500 and by_id["1.1-016"].stated_cap_w is None
    assert hardware(by_id["1.1-016"]).tdp_w == 500
    assert by_id["2.0-032"].stated_cap_w == 275 and by_id["2.0-032"].maxq


def test_bert_large_flops_follow_the_formula_that_reproduces_the_zoos_bert_base() -> None:
    assert BERT_LARGE_384_FLOPS == 246_423_748_608
    base_without_attention = 2 * 12 * 128 * 12 * 768**2
    assert base_without_attention == pytest.approx(workloads.get("bert_base").info.flops_per_sample, rel=1e-4)


def test_utilisation_is_achieved_int8_operations_over_the_int8_peak() -> None:
    pair = Pair(
        public_id="2.1-0019", system=SYSTEM, organization="Fujitsu", version="v2.1", workload="resnet50",
        scenario="Offline", accelerator="NVIDIA A100-SXM-80GB", catalog_id="a100-sxm4-80gb", accelerators=8,
        samples_per_s=297046.0, system_power_w=3310.0, host_cpu="x", host_sockets=2, host_cpu_tdp_w=195.0,
        software="TensorRT", maxq=False,
    )  # fmt: skip
    peak = get("a100-sxm4-80gb").peak_int8_tops  # derived: 624 TOP/s by NVIDIA's datasheet
    assert peak is not None and peak == pytest.approx(624, rel=0.01)
    assert compute_util(pair) == pytest.approx(297046 / 8 * 8_178_368_512 / (peak * 1e12))
    found = observation(pair)
    assert found is not None and found.system and found.host_cpu_tdp_w == 390.0 and found.factors == ()
    assert mlperf_power.readable(pair)


@needs_datasets
@pytest.mark.parametrize(
    ("public_id", "workload", "scenario", "samples", "watts", "maxq"),
    [
        ("2.1-0019", "resnet50", "Offline", 297046.0, 3310.028742, False),
        ("1.1-006", "resnet50", "Server", 96015.0, 1446.1595, True),
        ("4.0-0063", "bert-99", "Offline", 53726.9, 5080.34, True),  # v4.0: commas and 'Watts'
        ("3.0-0111", "resnet50", "Offline", 36427.9, 603.5295522, False),  # the edge file
    ],
)
def test_the_real_dataset_pairs_these_runs_as_published(
    public_id: str, workload: str, scenario: str, samples: float, watts: float, maxq: bool
) -> None:
    assert DATASETS is not None
    loaded = load(DATASETS)
    (pair,) = [p for p in loaded.pairs if (p.public_id, p.workload, p.scenario) == (public_id, workload, scenario)]
    assert (pair.samples_per_s, pair.system_power_w, pair.maxq) == (samples, watts, maxq)


@needs_datasets
def test_the_real_dataset_says_why_it_leaves_rows_out() -> None:
    assert DATASETS is not None
    skipped = load(DATASETS).skipped
    assert skipped["host CPU without a TDP in codecarbon's table: Ampere Altra Q80-30"] > 0
    assert skipped["NVIDIA accelerator without a catalog entry: NVIDIA A2"] > 0
