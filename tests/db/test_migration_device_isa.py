"""Migration 0012 (a CPU device's ISA features): each CPU device stored before takes its machine's
latest spec snapshot's features; a GPU takes none."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.db import migrate
from tests.conftest import BACKENDS, ScratchDatabases
from tests.db.test_migration_sessions import _columns
from tests.db.test_migrations import _insert, _rows


def _spec(features: list[str]) -> dict[str, object]:
    return {"cpu": {"model_name": "Intel Xeon Processor", "isa_features": features}}


def _insert_devices(url: str) -> None:
    """Two machines as revision 0011 stored them: one with two spec snapshots (the later one without
    AMX), a CPU and a GPU; one whose only snapshot predates the probe's features (none listed)."""
    now = datetime.now(UTC)
    first, second = uuid.uuid4().hex, uuid.uuid4().hex
    _insert(
        url,
        {
            "machines": [
                {"id": m, "fingerprint": m, "hostname": m[:6], "status": "online", "labels": {}, "created_at": now}
                for m in (first, second)
            ],
            "spec_snapshots": [
                {"id": 1, "machine_id": first, "spec_hash": "a", "spec": _spec(["avx512f", "amx_bf16"]),
                 "created_at": now - timedelta(days=1)},
                {"id": 2, "machine_id": first, "spec_hash": "b", "spec": _spec(["avx512f", "avx512_bf16"]),
                 "created_at": now},
                {"id": 3, "machine_id": second, "spec_hash": "c", "spec": {"cpu": {}}, "created_at": now},
            ],
            "devices": [
                {"machine_id": first, "device_id": "cpu", "kind": "cpu", "name": "Intel Xeon Processor"},
                {"machine_id": first, "device_id": "cuda:0", "kind": "cuda", "name": "NVIDIA H100"},
                {"machine_id": second, "device_id": "cpu", "kind": "cpu", "name": "AMD EPYC"},
            ],
        },
    )  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_cpu_devices_stored_before_take_their_latest_snapshots_features(
    backend: str, scratch: ScratchDatabases
) -> None:
    url = scratch.new(backend)
    migrate.upgrade(url, "0011")
    _insert_devices(url)
    migrate.upgrade(url, "0012")
    assert _rows(url, "SELECT name, kind, isa_features FROM devices") == {
        ("Intel Xeon Processor", "cpu", "avx512f avx512_bf16"),
        ("NVIDIA H100", "cuda", None),
        ("AMD EPYC", "cpu", None),
    }
    migrate.downgrade(url, "0011")
    assert "isa_features" not in _columns(url, "devices")
    assert len(_rows(url, "SELECT machine_id, device_id FROM devices")) == 3
