"""Published rows of one part's several systems (app/perfmodel/observations.py, ``system_errors``): how
far two machines of one part run one config, beside the reference runs' machines in the machine band."""

from __future__ import annotations

import math
from dataclasses import replace

from app import catalog
from app.catalog.published import shipped as published
from app.perfmodel import bands
from app.perfmodel.calibrate import Observation
from app.perfmodel.observations import from_public, system_errors
from app.perfmodel.params import shipped
from app.perfmodel.predict import profile_of

LAMBDA = ("public:lambda-2022", "public:lambda-2024")


def lambda_systems() -> list[Observation]:
    parts = {e.id: e for e in catalog.load()}
    rows = [r for r in published() if r.source in LAMBDA]
    return [o for o in from_public(rows, parts, profile_of) if o.device.kind == "gpu"]


def test_each_system_is_predicted_by_each_other_of_its_part_config_and_stack() -> None:
    found = lambda_systems()
    one = next(o for o in found if o.label == "h100-sxm5-80gb resnet50/train fp16 (public:lambda-2024)")
    twins = [replace(one, throughput=100.0), replace(one, throughput=125.0)]
    alone = replace(one, batch=one.batch + 1, throughput=80.0)  # another config, one system: no error
    errors = system_errors([*twins, alone], shipped().of("gpu"), shipped().traffic)
    assert sorted(e.value for e in errors) == [math.log(100 / 125), math.log(125 / 100)]
    assert {e.regime for e in errors} == {"device"}, "a large-batch training step the GPU bounds"


def test_lambdas_hosts_of_one_gpu_run_its_training_within_a_tenth_of_each_other_mostly() -> None:
    errors = system_errors(lambda_systems(), shipped().of("gpu"), shipped().traffic)
    # the six H100 SXM hosts and two RTX A6000s and H100 PCIe of Lambda's rows the zoo has profiles for
    assert len(errors) > 100 and all(e.regime == "device" for e in errors)
    band = bands.quantile([abs(e.value) for e in errors])
    assert band is not None and 0.02 < band < 0.15
