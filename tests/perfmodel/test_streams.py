"""A published throughput mode as the model sees it: OpenVINO's benchmark_app rows are a batch-1
stream per core, all cores busy at once (app/perfmodel/observations.py ``how_run``)."""

from __future__ import annotations

import pytest

from app.catalog import load
from app.contracts import Precision, Task
from app.perfmodel.device import Device
from app.perfmodel.model import scaled
from app.perfmodel.observations import how_run
from app.perfmodel.predict import Ask, answer, predict


def test_openvinos_published_cpu_rows_ran_a_stream_per_core_and_nothing_else_did() -> None:
    catalog = {h.id: h for h in load()}
    xeon, h100 = catalog["xeon-platinum-8380"], catalog["h100-sxm5-80gb"]
    assert how_run("public:openvino-2024.1", xeon) == (1, 40)
    assert how_run("public:lambda-2024", h100) == (None, 1)
    assert how_run("public:openvino-2024.1", h100) == (None, 1)
    assert how_run("lab", xeon) == (None, 1)


def test_a_core_among_all_busy_ones_gets_the_base_clock_and_its_share_of_the_bandwidth() -> None:
    cpu = Device("toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None, turbo=1.9)
    alone = scaled(cpu, 1)
    among_all = scaled(cpu, 1, busy=64)
    assert among_all[0] == pytest.approx(4e12 / 64)  # base clock: the power is everyone's
    assert alone[0] == pytest.approx(1.9 * 4e12 / 64)
    assert among_all[2] == pytest.approx(3e11 / 64)
    assert alone[2] == pytest.approx(4 * 3e11 / 64)


def test_streams_multiply_a_steps_samples_and_a_whole_socket_of_them_beats_one_core() -> None:
    xeon = next(h for h in load() if h.id == "xeon-platinum-8380")
    one = predict("resnet50", Task.infer, Precision.fp32, 1, xeon, runtime="openvino", threads=1)
    socket = answer("resnet50", Task.infer, Ask(Precision.fp32, 1, xeon, "openvino", 1, 1.0, streams=40))
    assert one is not None and socket is not None
    # 40 streams at the base clock and a 40th of the bandwidth each: less than 40 turbo cores, more than 10
    assert 10 * one.throughput < socket.throughput < 40 * one.throughput
    assert socket.throughput == pytest.approx(40 * 1 / socket.breakdown.seconds)
