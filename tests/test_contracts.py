from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter, ValidationError

from app.contracts import Job, MachineLabels, MachineSpec, Result, RunReport, WorkloadSpec
from app.contracts.catalog import PriceDate
from app.contracts.common import DeviceId
from app.contracts.fleet import TokenCreate
from testkit.factories import h100_spec, result, run_report

DIMENSIONLESS = {"batch_size", "threads", "devices", "nodes", "iterations", "cv", "scaling_efficiency"}
UNIT_SUFFIXES = ("_ms", "_s", "_w", "_j", "_mb", "_tflops", "_gb_per_s", "_samples_per_s", "_tokens_per_s", "_tokens")


def test_every_measured_quantity_names_its_unit() -> None:
    numeric = [
        name
        for name, field in Result.model_fields.items()
        if field.annotation is not None and ("float" in str(field.annotation) or "int" in str(field.annotation))
    ]
    assert numeric, "Result has numeric fields"
    for name in numeric:
        assert name in DIMENSIONLESS or name.endswith(UNIT_SUFFIXES), f"{name} has no unit in its name"


def test_unknown_field_is_rejected() -> None:
    data = result().model_dump(mode="json") | {"throughput": 1.0}
    with pytest.raises(ValidationError, match="throughput"):
        Result.model_validate(data)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_rejected(value: str) -> None:
    text = json.dumps(result().model_dump(mode="json")).replace('"latency_p50_ms": 28.2', f'"latency_p50_ms": {value}')
    assert value in text
    with pytest.raises(ValidationError, match="latency_p50_ms"):
        Result.model_validate_json(text)


def test_ok_result_needs_its_measurements() -> None:
    with pytest.raises(ValidationError, match="throughput_samples_per_s"):
        result(throughput_samples_per_s=None)


@pytest.mark.parametrize("status", ["oom", "unsupported", "error"])
def test_failed_result_needs_a_reason(status: str) -> None:
    with pytest.raises(ValidationError, match="needs a reason"):
        result(status=status, reason=None)
    assert result(status=status, reason="CUDA out of memory at batch 4096").status.value == status


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("throughput_samples_per_s", 1.7e308),
        ("latency_p50_ms", 1e12),
        ("mean_power_w", 1e9),
        ("energy_per_sample_j", 1e300),
        ("peak_memory_mb", 1e15),
        ("scaling_efficiency", 1e6),
    ],
)
def test_a_figure_no_machine_could_measure_is_refused(field: str, value: float) -> None:
    with pytest.raises(ValidationError, match=field):
        result(**{field: value})


@pytest.mark.parametrize("field", ["throughput_samples_per_s", "latency_p50_ms"])
def test_an_ok_result_measured_more_than_nothing(field: str) -> None:
    with pytest.raises(ValidationError, match="above 0"):
        result(**{field: 0.0})
    assert result(status="error", reason="crashed", **{field: 0.0}).status.value == "error"


def test_a_result_must_name_a_device_the_machine_has() -> None:
    assert {d.id for d in h100_spec().devices} >= {"cpu", "cuda:0"}
    with pytest.raises(ValidationError, match=r"cuda:7, which the machine spec does not list"):
        run_report(results=[result(device="cuda:7")])


def test_a_job_cannot_be_further_along_than_its_configs() -> None:
    from app.contracts import JobProgress

    with pytest.raises(ValidationError, match=r"configs_done \(100\) is more than configs_total \(1\)"):
        JobProgress(configs_done=100, configs_total=1)
    assert JobProgress(configs_done=1, configs_total=1).configs_done == 1


def test_power_figure_must_say_where_it_came_from() -> None:
    with pytest.raises(ValidationError, match="power_source"):
        result(power_source="none", mean_power_w=300.0)


def test_device_id_and_kind_must_agree() -> None:
    data = h100_spec().model_dump(mode="json")
    data["devices"][1]["kind"] = "cpu"
    with pytest.raises(ValidationError, match="does not match kind"):
        MachineSpec.model_validate(data)


def test_run_report_round_trips_through_json() -> None:
    report = run_report()
    assert RunReport.model_validate_json(report.model_dump_json()) == report


def test_run_that_ends_before_it_starts_is_rejected() -> None:
    report = run_report()
    with pytest.raises(ValidationError, match="finished_at"):
        run_report(started_at=report.finished_at, finished_at=report.started_at)


def test_workload_spec_takes_exactly_one_workload() -> None:
    assert WorkloadSpec(workload="bert_base").workload == "bert_base"
    with pytest.raises(ValidationError, match="exactly one"):
        WorkloadSpec()
    with pytest.raises(ValidationError, match="exactly one"):
        WorkloadSpec.model_validate(
            {
                "workload": "bert_base",
                "custom": {"name": "x", "flops_per_sample": 1, "bytes_per_sample": 1, "parameters": 1},
            }
        )


def test_job_needs_a_target() -> None:
    with pytest.raises(ValidationError, match="machine_id or a label selector"):
        Job.model_validate(
            {"id": "00000000-0000-0000-0000-000000000001", "suite": "quick", "created_at": "2026-01-01T00:00:00Z"}
        )


def test_a_label_is_one_line_of_plain_text() -> None:
    """A hostname reaches an admin's terminal: an escape sequence in it could erase and forge lines."""
    data = h100_spec().model_dump(mode="json")
    with pytest.raises(ValidationError, match=r"control character '\\x1b' is not allowed"):
        MachineSpec.model_validate({**data, "hostname": "evil\x1b[2K\rgpu-node-01"})
    with pytest.raises(ValidationError, match="control character"):
        MachineSpec.model_validate({**data, "hostname": "evil\x9b2K"})
    assert MachineSpec.model_validate({**data, "hostname": "rack 3\tnode\r\n7"}).hostname == "rack 3 node 7"


def test_the_old_workload_spelling_is_split_into_workload_and_task() -> None:
    from app.contracts import PublicResult

    old = result(workload="bert_base/train", task=None)
    assert (old.workload, old.task) == ("bert_base", "train")
    assert result(workload="bert_base/infer", task="infer").workload == "bert_base"
    with pytest.raises(ValidationError, match="names task 'train'"):
        result(workload="bert_base/train", task="infer")
    published = PublicResult.model_validate(
        {
            "source": "public:x",
            "hardware_id": "l4",
            "hardware_name": "L4",
            "workload": "resnet50/train",
            "runtime": "pytorch",
            "precision": "fp16",
            "batch_size": 64,
            "throughput_samples_per_s": 100.0,
        }
    )
    assert (published.workload, published.task) == ("resnet50", "train")


# --------------------------------------------------------------------------- what once made a 500


def test_a_nul_is_refused_at_any_depth_and_the_message_says_where() -> None:
    from app.contracts import MachineLabels, Problem

    body = run_report().model_dump(mode="json")
    body["machine"]["software"]["libraries"]["torch"] = "2.5\x00"
    with pytest.raises(ValidationError, match=r"libraries\.torch: text may not contain a NUL"):
        RunReport.model_validate(body)
    with pytest.raises(ValidationError, match="a key of labels"):
        MachineLabels(labels={"g\x00pu": "h100"})
    # a problem quotes what was refused, NUL and all (JSON escapes it)
    assert Problem(type="t", title="t", status=422, detail="bad \x00").detail == "bad \x00"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2026-01-01T10:00:00", "timezone"),
        ("0001-01-01T00:00:00+00:01", "outside the years 1-9999"),
        ("9999-12-31T23:59:59-00:01", "outside the years 1-9999"),
    ],
)
def test_a_run_time_needs_its_offset_and_a_year_the_databases_hold_in_utc(value: str, message: str) -> None:
    body = run_report().model_dump(mode="json") | {"started_at": value, "finished_at": "9999-12-31T00:00:00Z"}
    with pytest.raises(ValidationError, match=message):
        RunReport.model_validate(body)


@pytest.mark.parametrize(
    ("text", "nesting"),
    [
        ("[[grid]]\nworkloads = ['a']\n", 2),
        ("x = [[1, [2]], {a = {b = [3]}}]\n", 4),
        ('x = \'[[[[\'\ny = "{{\\"[["\n', 0),  # brackets in strings, an escaped quote
        ('x = \'\'\'\n[[[[\n\'\'\'\ny = """]]\\"""[["""\n', 0),  # multi-line strings
        ("x = '''a''''  # [[[[\n", 0),  # a closing quote too many, then a comment
        ('x = "open [[[[\ny = [[1]]\n', 2),  # an unterminated string ends at its line
        ("# [[[[\nx = 1\n", 0),
    ],
)
def test_toml_nesting_counts_brackets_outside_strings_and_comments(text: str, nesting: int) -> None:
    from app.contracts.suites import toml_nesting

    assert toml_nesting(text) == nesting


def test_a_deeply_nested_suite_is_a_config_error_not_a_recursion_error() -> None:
    from app.bench.suites import parse_suite
    from app.errors import ConfigError

    with pytest.raises(ConfigError, match="nested 5000 levels deep"):
        parse_suite("name = 'deep'\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    assert parse_suite("name = 'ok'\n[[grid]]\nworkloads = ['resnet50']\n").name == "ok"


@pytest.mark.parametrize("value", ["cuda:\u0663", "cuda:\uff13", "cuda:\u0663\u0663"])
def test_a_device_id_takes_ascii_digits_only(value: str) -> None:
    """pydantic's regex \\d matches any Unicode digit: one device could be listed under two spellings."""
    with pytest.raises(ValidationError):
        TypeAdapter(DeviceId).validate_python(value)


def test_a_price_date_takes_ascii_digits_only() -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(PriceDate).validate_python("\u0662\u0660\u0662\u0664-02-11")
    assert TypeAdapter(PriceDate).validate_python("2024-02-11") == "2024-02-11"


@pytest.mark.parametrize(
    "body",
    [{"labels": {"rack": "a\x1b[2Kforged"}}, {"labels": {"r\x1b[2Kk": "a"}}],
)
def test_a_label_is_a_plain_line_as_a_hostname_is(body: dict[str, dict[str, str]]) -> None:
    """A label reaches an admin's terminal (`hwadvisor machines list`) as a hostname does."""
    with pytest.raises(ValidationError, match="control character"):
        MachineLabels.model_validate(body)
    assert MachineLabels.model_validate({"labels": {"rack": "a\tb"}}).labels == {"rack": "a b"}


def test_a_token_note_is_a_plain_line() -> None:
    with pytest.raises(ValidationError, match="control character"):
        TokenCreate.model_validate({"kind": "readonly", "note": "ci\x1b]0;owned\x07"})
