"""Idle readings from nvidia-smi -q and the lab's readings as a CSV become observations of the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.perfmodel.readings import idle_readings, nvidia_smi_idle, observations_csv
from testkit import MACHINES

SMI = (MACHINES / "h100" / "nvidia-smi-q.txt").read_text()


def test_an_idle_h100_in_p0_is_a_reading_at_zero_utilisation() -> None:
    found = nvidia_smi_idle(SMI)
    assert found is not None
    assert found.hardware.id == "h100-sxm5-80gb"
    assert (found.compute_util, found.memory_util, found.watts) == (0.0, 0.0, 124.59)
    assert not found.system


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Performance State                                  : P0", "Performance State : P8"),
        ("        GPU                                            : 2 %", "        GPU : 87 %"),
        ("NVIDIA H100 80GB HBM3", "NVIDIA Mystery 9000"),
    ],
)
def test_a_busy_clocked_down_or_unknown_gpu_is_no_idle_reading(old: str, new: str) -> None:
    assert old in SMI
    assert nvidia_smi_idle(SMI.replace(old, new)) is None


def test_idle_files_are_read_with_their_paths_and_a_busy_one_is_refused(tmp_path: Path) -> None:
    idle = tmp_path / "machines" / "h100.txt"
    idle.parent.mkdir()
    idle.write_text(SMI)
    (found,) = idle_readings([idle], tmp_path)
    assert (found.watts, found.label) == (124.59, "machines/h100.txt: NVIDIA H100 80GB HBM3 idle in P0")
    busy = tmp_path / "busy.txt"
    busy.write_text(SMI.replace("        GPU                                            : 2 %", "        GPU : 87 %"))
    with pytest.raises(ValueError, match=r"busy\.txt: not an idle GPU in P0.*performance state P0"):
        idle_readings([idle, busy], tmp_path)


def test_lab_readings_are_read_from_a_csv() -> None:
    text = "catalog_id,compute_util,memory_util,watts,label\nh100-sxm5-80gb,0.4,0.2,520,run 7\nl4,0.1,,40,\n"
    first, second = observations_csv(text)
    assert (first.hardware.id, first.compute_util, first.memory_util, first.watts, first.label) == (
        "h100-sxm5-80gb",
        0.4,
        0.2,
        520.0,
        "run 7",
    )
    assert second.memory_util is None and second.label == "line 3"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("catalog_id,watts\nl4,40\n", "lacks the columns compute_util, memory_util"),
        ("catalog_id,compute_util,memory_util,watts\nl4,45,,40\n", "line 2: utilisations are shares"),
        ("catalog_id,compute_util,memory_util,watts\nnope,0.1,,40\n", "line 2: no catalog entry"),
        ("catalog_id,compute_util,memory_util,watts\nl4,0.1,,-3\n", "line 2: .*watts > 0"),
    ],
)
def test_a_bad_csv_says_which_line_and_why(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        observations_csv(text)
