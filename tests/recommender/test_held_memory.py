"""A measured or interpolated figure states what its config holds in device memory, as a modelled one
does (app/recommender/estimators/base.py ``held_gb``), and is never rejected for memory it did not need."""

from __future__ import annotations

import pytest

from app.catalog import get
from app.contracts import Precision, Task
from app.perfmodel.predict import profile_of
from app.recommender.estimators.base import Config, Evidence, held_gb
from app.recommender.evidence import LAB, catalog_hardware


def test_a_measured_config_states_the_profiles_memory_and_none_where_the_profile_says_it_cannot_have_run() -> None:
    evidence = Evidence([], workload="resnet50", task=Task.train)
    profile = profile_of("resnet50", Task.train, Precision.fp32)
    assert profile is not None
    h100, t4 = catalog_hardware(get("h100-sxm5-80gb")), catalog_hardware(get("t4"))
    at_256 = held_gb(h100, Config("torch-eager", Precision.fp32, 256, None, LAB), evidence)
    assert at_256 == pytest.approx(profile.memory.at(256) / 1e9) and 1 < at_256 < 80
    # a batch the profile puts beyond a 16 GB T4: had it been measured there, the profile overstates it
    huge = next(b for b in (2**k for k in range(8, 16)) if profile.memory.at(b) > 16e9)
    assert held_gb(t4, Config("torch-eager", Precision.fp32, huge, None, LAB), evidence) is None
    assert held_gb(h100, Config("torch-eager", Precision.fp32, 256, None, LAB, variant="int8"), evidence) is None
    assert held_gb(h100, Config("torch-eager", Precision.fp32, 256, None, LAB), Evidence([])) is None
