"""The `hwadvisor` command line as a user runs it: a real process, its exit status and its words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.agent.settings import AgentSettings
from app.bench.suites import load_suite
from app.cli.bench import ONLY_EXAMPLES
from app.contracts import TokenKind
from app.db import tokens
from app.db.engine import Database
from testkit import ROOT
from testkit.factories import Api, machine_spec, result, run_report
from testkit.processes import Admin, ServerProcess, free_port
from tests.conftest import ScratchDatabases


def hwadvisor(
    *args: str, env: dict[str, str] | None = None, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout_s
    )


def test_help_lists_every_command_group_without_importing_torch() -> None:
    script = (
        "import sys\n"
        "from app.cli import cli\n"
        "try:\n"
        "    cli(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('heavy:', sorted(m for m in ('torch', 'onnxruntime', 'uvicorn', 'fastapi') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "heavy: []" in done.stdout
    for command in ("server", "up", "probe", "bench", "recommend", "import", "db", "token", "machines", "jobs"):
        assert f" {command} " in done.stdout
    assert " agent " in done.stdout and " catalog " in done.stdout


def scratch_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HWADVISOR_DATABASE_URL": database_url, "HWADVISOR_DATA_DIR": str(tmp_path)}


def test_import_of_a_csv_that_is_not_utf8_says_so_in_one_line(tmp_path: Path) -> None:
    latin1 = tmp_path / "vendor.csv"
    latin1.write_bytes("source,workload\npublic:vendor-x,résnet50/infer\n".encode("latin-1"))
    done = hwadvisor("import", str(latin1), env=scratch_env(f"sqlite:///{tmp_path / 'db.sqlite'}", tmp_path))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "is not UTF-8" in done.stderr and "0xe9" in done.stderr


def test_import_reads_a_csv_saved_by_excel_with_a_byte_order_mark(tmp_path: Path) -> None:
    csv = (
        "source,hardware_id,hardware_name,workload,runtime,precision,batch_size,throughput_samples_per_s\n"
        "public:vendor-x,h100-sxm5-80gb,H100 SXM5,resnet50/infer,tensorrt,fp16,64,31000\n"
    )
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"\xef\xbb\xbf" + csv.encode())
    done = hwadvisor("import", str(excel), env=scratch_env(f"sqlite:///{tmp_path / 'db.sqlite'}", tmp_path))
    assert done.returncode == 0, done.stderr
    assert "imported 1 results" in done.stdout


def test_bench_only_an_unknown_workload_names_the_ones_that_exist_and_measures_nothing() -> None:
    done = hwadvisor("bench", "--only", "nosuch")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "unknown workload 'nosuch'; these exist: " in done.stderr
    named = done.stderr.split("these exist: ", 1)[1]
    assert "resnet50" in named and "gemm_1024" in named and "[1/" not in done.stderr


def test_bench_only_a_workload_its_suite_does_not_run_says_what_the_suite_runs() -> None:
    done = hwadvisor("bench", "--only", "gemm_2048")  # a real primitive, but the quick suite has none of it
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "suite quick runs no gemm_2048 config on this machine" in done.stderr and "resnet50" in done.stderr


def test_the_examples_in_bench_help_are_in_the_default_suite() -> None:
    quick = {workload for row in load_suite("quick").grid for workload in row.workloads}
    assert ONLY_EXAMPLES and set(ONLY_EXAMPLES) <= quick
    assert ", ".join(ONLY_EXAMPLES) in hwadvisor("bench", "--help", env={**os.environ, "COLUMNS": "300"}).stdout


def test_recommend_an_unknown_workload_names_the_ones_that_exist(api: Api, database_url: str, tmp_path: Path) -> None:
    _machine_id, token = api.enroll()
    pruned = result(workload="mymodel/infer", variant="pruned-50", throughput_samples_per_s=12_000.0)
    assert api.post_run(token, run_report(results=[result(workload="mymodel/infer"), pruned])).status_code == 201
    env = scratch_env(database_url, tmp_path)

    unknown = hwadvisor("recommend", "nosuchmodel", env=env)
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    assert "unknown workload 'nosuchmodel'; these exist: " in unknown.stderr
    named = unknown.stderr.split("these exist: ", 1)[1]
    assert "resnet50" in named and "bert_base_squad" in named  # the zoo's and the published ones

    lab_own = hwadvisor("recommend", "mymodel", env=env)  # not in the zoo, but measured here
    assert lab_own.returncode == 0, lab_own.stderr
    assert "nothing has measured" not in lab_own.stdout and "torch-eager" in lab_own.stdout
    assert "variant pruned-50" not in lab_own.stdout and "allow_variants offers them" in lab_own.stdout
    with_variants = hwadvisor("recommend", "mymodel", "--variants", env=env)
    assert "variant pruned-50~" in with_variants.stdout
    assert "~ a model variant, not the original model: speed only; check accuracy on your data" in with_variants.stdout
    assured = hwadvisor("recommend", "mymodel", "--objective", "assured_throughput", env=env)
    assert assured.returncode == 0 and "ranked by the low end of each band" in assured.stdout, assured.stderr


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_which_gpu_is_asked_with_the_catalogs_word_for_one(database_url: str, tmp_path: Path) -> None:
    env = scratch_env(database_url, tmp_path)
    asked = ("recommend", "resnet50", "--catalog", "--power-budget", "300", "--limit", "5", "--json")
    gpus = hwadvisor(*asked, "--device-kind", "gpu", env=env)
    assert gpus.returncode == 0, gpus.stderr
    answer = json.loads(gpus.stdout)
    assert answer["query"]["constraints"]["device_kinds"] == ["cuda"]
    assert answer["candidates"] and {c["hardware"]["kind"] for c in answer["candidates"]} == {"cuda"}
    unknown = hwadvisor(*asked, "--device-kind", "tpu", env={**env, "COLUMNS": "300"})
    assert unknown.returncode != 0 and "give cuda (or gpu) for GPUs, or cpu" in unknown.stderr


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_plan_prints_devices_time_and_cost_and_refuses_a_bad_cloud_rate(database_url: str, tmp_path: Path) -> None:
    env = scratch_env(database_url, tmp_path)
    job = ("--dataset", "1281167", "--epochs", "90", "--deadline-h", "12", "--precision", "fp16", "--limit", "3")
    shown = hwadvisor("plan", "resnet50", *job, "--cloud", "h100-sxm5-80gb=2.49", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "train h" in shown.stdout and "total 3y $" in shown.stdout and "assumptions:" in shown.stdout
    as_json = hwadvisor("plan", "resnet50", *job, "--json", env=env)
    answer = json.loads(as_json.stdout)
    assert answer["candidates"] and all(c["job"]["time_to_train_hours"] <= 12 for c in answer["candidates"])
    bad = hwadvisor("plan", "resnet50", "--cloud", "h100", env=env)
    assert bad.returncode != 0 and "CATALOG_ID=USD_PER_DEVICE_HOUR" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_cluster_is_declared_listed_planned_over_and_deleted(api: Api, database_url: str, tmp_path: Path) -> None:
    env = scratch_env(database_url, tmp_path)
    a, _ = api.enroll(machine_spec(hostname="node-a"))
    b, _ = api.enroll(machine_spec(hostname="node-b"))
    members = ("--machine", str(a), "--machine", str(b))
    made = hwadvisor(
        "clusters", "create", "rack-b", *members, "--network-gb-s", "12.5", "--interconnect", "100 GbE", env=env
    )
    assert made.returncode == 0, made.stderr
    assert "rack-b: 2 machines, 2 devices (up to 1 in one), 12.5 GB/s between them" in made.stdout
    listed = hwadvisor("clusters", "list", env=env)
    assert "rack-b: 2 devices on 2 machines, 12.5 GB/s, 100 GbE" in listed.stdout and "node-b" in listed.stdout
    planned = hwadvisor("plan", "resnet50", "--owned", "--cluster", "rack-b", "--precision", "bf16", "--json", env=env)
    assert planned.returncode == 0, planned.stderr
    assert any(line.startswith("declared cluster rack-b") for line in json.loads(planned.stdout)["assumptions"])
    assert hwadvisor("clusters", "delete", "rack-b", env=env).returncode == 0
    again = hwadvisor("clusters", "delete", "rack-b", env=env)
    assert again.returncode == 1 and "no cluster named 'rack-b'" in again.stderr and "Traceback" not in again.stderr


@pytest.fixture
def server(scratch: ScratchDatabases, tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(scratch.new("sqlite"), tmp_path).start()
    yield process
    process.stop()


def enrolled_machine(admin: Admin) -> tuple[str, str]:
    """(machine id, machine token) of a machine enrolled through the API, still pending approval."""
    body = {"spec": machine_spec().model_dump(mode="json")}
    response = admin.http.post("/api/v1/agents/enroll", json=body, headers=bearer(admin.enrollment_token()))
    assert response.status_code == 201, response.text
    return str(response.json()["machine_id"]), str(response.json()["machine_token"])


WRONG_TOKEN = "hwa_machine_000000000000." + "A" * 43


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_bench_upload_checks_the_machine_token_before_measuring(server: ServerProcess) -> None:
    admin = Admin(server.url)
    wrong = hwadvisor("bench", "--only", "copy_256mb", "--upload", server.url, "--token", WRONG_TOKEN)
    assert wrong.returncode == 1 and "Traceback" not in wrong.stderr and "[1/" not in wrong.stderr
    assert "not measuring: the server refused" in wrong.stderr and "(401): unknown token" in wrong.stderr

    machine_id, token = enrolled_machine(admin)
    pending = hwadvisor("bench", "--only", "copy_256mb", "--upload", server.url, "--token", token)
    assert pending.returncode == 1 and "[1/" not in pending.stderr
    assert (
        f"not measuring: machine {machine_id} is pending approval" in pending.stderr
        and "machines approve" in pending.stderr
    )

    admin.approve(machine_id)
    args = ("bench", "--only", "copy_256mb", "--iterations", "3", "--upload", server.url, "--token", token)
    uploaded = hwadvisor(*args, timeout_s=300)
    assert uploaded.returncode == 0, uploaded.stderr
    assert "[1/1]" in uploaded.stderr and "uploaded run" in uploaded.stderr
    assert [r["workload"] for r in admin.results(machine_id=machine_id)] == ["copy_256mb"]
    assert admin.agent_state(machine_id) == "idle"  # busy while it measured, not left so


def test_agent_run_once_against_a_dead_server_fails_in_one_line(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    config = tmp_path / "agent.json"
    AgentSettings(server=dead, machine_id=uuid.uuid4(), token=WRONG_TOKEN, outbox=tmp_path / "outbox.db").save(config)
    done = hwadvisor("agent", "run", "--once", "--no-quiet-check", "--config", str(config))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"hwadvisor: error: cannot reach the hwadvisor server at {dead}" in done.stderr


def test_token_list_shows_used_up_and_expired_tokens_and_uses_only_where_counted(
    db: Database, database_url: str, tmp_path: Path
) -> None:
    with db.writing() as session:
        one_use, _ = tokens.issue(session, kind=TokenKind.enrollment, note="one use", max_uses=1)
        spent, _ = tokens.issue(session, kind=TokenKind.enrollment, note="spent", max_uses=1)
        tokens.consume_use(session, spent.id)
        unlimited, _ = tokens.issue(session, kind=TokenKind.enrollment, note="open")
        expired, _ = tokens.issue(session, kind=TokenKind.enrollment, expires_in=timedelta(seconds=-1))
        readonly, _ = tokens.issue(session, kind=TokenKind.readonly, note="grafana")
        revoked, _ = tokens.issue(session, kind=TokenKind.readonly)
        tokens.revoke(session, revoked.id)
        rows = {"one_use": one_use, "spent": spent, "unlimited": unlimited, "expired": expired}
        ids = {name: row.id for name, row in {**rows, "readonly": readonly, "revoked": revoked}.items()}

    done = hwadvisor("token", "list", env=scratch_env(database_url, tmp_path))
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert lines[ids["one_use"]].split()[1:4] == ["enrollment", "active", "uses=0/1"]
    assert lines[ids["spent"]].split()[1:5] == ["enrollment", "used", "up", "uses=1/1"]
    assert lines[ids["unlimited"]].split()[1:4] == ["enrollment", "active", "uses=0"]
    assert lines[ids["expired"]].split()[1:3] == ["enrollment", "expired"]
    assert lines[ids["readonly"]].split()[1:] == ["readonly", "active", "grafana"]  # uses are not counted
    assert lines[ids["revoked"]].split()[1:] == ["readonly", "revoked"]
