"""A result keeps its device count, scaling efficiency and variant through the contract and the database."""

from __future__ import annotations

import uuid

from app.contracts import Heartbeat, Result, Task
from app.db import evidence, machines, results, runs
from app.db.engine import Database
from testkit.factories import enrolled, machine_spec, result, run_report


def test_a_two_device_result_round_trips_and_an_old_one_is_of_one_device(db: Database) -> None:
    two = result(workload="resnet20", task="train", device="cpu", threads=1, devices=2, scaling_efficiency=0.87)
    assert Result.model_validate_json(two.model_dump_json()) == two
    legacy = result().model_dump(mode="json")
    del legacy["devices"], legacy["scaling_efficiency"]  # as an agent from before data parallelism uploads
    old = Result.model_validate(legacy)
    assert old.devices == 1 and old.scaling_efficiency is None

    machine_id = _store(db, [two, old])
    with db.reading() as session:
        stored = results.page(session, results.ResultFilter(machine_id=machine_id), limit=10, offset=0).items
    assert [(r.devices, r.scaling_efficiency) for r in stored] == [(2, 0.87), (1, None)]
    assert stored[0].model_dump(include=set(Result.model_fields)) == two.model_dump()


def test_the_recommender_reads_one_device_results_only(db: Database) -> None:
    """Two devices' throughput together is not evidence of what one device does."""
    train = {"workload": "resnet20", "task": "train", "device": "cpu", "threads": 1}
    one = result(**train, batch_size=32, throughput_samples_per_s=220.0)
    two = result(**train, batch_size=32, throughput_samples_per_s=400.0, devices=2, scaling_efficiency=0.91)
    _store(db, [one, two])
    with db.reading() as session:
        measured = list(evidence.lab_measurements(session, "resnet20", Task.train))
    assert [m.throughput_samples_per_s for m in measured] == [220.0]


def test_a_variant_round_trips_filters_and_exports_and_an_old_result_is_the_original(db: Database) -> None:
    pruned = result(variant="pruned-50", throughput_samples_per_s=30.0)
    legacy = result().model_dump(mode="json")
    del legacy["variant"]  # as an agent from before variants uploads
    old = Result.model_validate(legacy)
    assert old.variant is None and result(variant="none").variant is None
    machine_id = _store(db, [pruned, old])
    with db.reading() as session:

        def variants(variant: str | None) -> list[str | None]:
            where = results.ResultFilter(machine_id=machine_id, variant=variant)
            return [r.variant for r in results.page(session, where, limit=10, offset=0).items]

        assert variants(None) == ["pruned-50", None]
        assert variants("pruned-50") == ["pruned-50"]
        assert variants("none") == [None]
    csv_text = "".join(results.iter_csv(db, results.ResultFilter(machine_id=machine_id)))
    header, first, second = csv_text.splitlines()[:3]
    column = header.split(",").index("variant")
    assert first.split(",")[column] == "pruned-50" and second.split(",")[column] == ""


def _store(db: Database, stored: list[Result]) -> uuid.UUID:
    """An enrolled, online machine's run of these results; the machine's id."""
    spec = machine_spec()
    machine_id = enrolled(db, spec)
    with db.writing() as session:
        machines.heartbeat(session, machine_id, Heartbeat(state="idle"))  # type: ignore[arg-type]
    runs.ingest(db, machine_id=machine_id, report=run_report(spec, results=stored))
    return machine_id
