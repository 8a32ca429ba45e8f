"""The server and agents as real processes on loopback, on SQLite and PostgreSQL.

1. The server is killed in the middle of a run and restarted: every result arrives exactly once.
2. An agent is SIGKILLed in the middle of a job: the lease expires, the job is requeued, a
   restarted agent completes it.
3. Two agents race for one job: exactly one runs it, and keeps it through a config longer than the
   job's lease.
4. A wrong, revoked or unapproved token: a clear error message and a non-zero exit, nothing stored.
5. A job cancelled mid-run: its agent stops after the config it is measuring.
6. Runs the server refuses (unknown job 409, too large 413) are quarantined and the runs behind them
   delivered; a retired machine's runs stay in the outbox. A database that refuses every run (5xx)
   fails the job after a bounded number of tries and the run is delivered once it takes it.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from app.agent.client import AgentClient
from app.agent.outbox import Outbox
from app.bench.runner import run_report, run_suite
from app.bench.suites import parse_suite
from app.contracts import JobStatus, MachineSpec
from app.probes import probe_machine
from testkit.factories import result
from testkit.processes import ONE_CONFIG, Admin, AgentProcess, ServerProcess, wait_for
from tests.conftest import BACKENDS, ScratchDatabases

# Eight configs of a few tenths of a second each: long enough to interrupt, short enough for CI.
SUITE = """
name = "tiny"
[measure]
warmup_budget_s = 0.05
time_budget_s = 0.5
[[grid]]
workloads = ["resnet56", "lstm", "fcn_r", "mobilenet_v2"]
batch_sizes = [4, 8]
threads = [1]
"""
CONFIGS = 8
ITERATIONS = "--iterations=4"
LEASE_S = 4.0
# One config whose warm-up alone outlasts the lease: the agent running it must renew the lease
# while it measures, or the other agent's next claim takes the job away.
LONGER_THAN_THE_LEASE = f"""
name = "long"
[measure]
warmup_min_s = {2 * LEASE_S}
warmup_budget_s = {2 * LEASE_S}
[[grid]]
workloads = ["resnet56"]
batch_sizes = [4]
threads = [1]
"""


@pytest.fixture(params=BACKENDS)
def server(request: pytest.FixtureRequest, scratch: ScratchDatabases, tmp_path: Path):  # type: ignore[no-untyped-def]
    process = ServerProcess(scratch.new(request.param), tmp_path, env={"HWADVISOR_JOB_LEASE_S": str(LEASE_S)}).start()
    yield process
    process.stop()


# The agent's side of a scenario does not depend on the server's database: these run on SQLite only,
# while the scenarios that hinge on the database (leases, one job for two agents, a server killed
# mid-write, a database refusing writes) run on both.
ON_SQLITE = pytest.mark.parametrize("server", ["sqlite"], indirect=True)


def enrolled_agent(server: ServerProcess, admin: Admin, home: Path, instance: str) -> tuple[AgentProcess, str]:
    agent = AgentProcess(home, instance)
    machine_id = agent.enroll(server.url, admin.enrollment_token())
    admin.approve(machine_id)
    return agent, machine_id


def agent_on_a_job(server: ServerProcess, home: Path) -> tuple[Admin, AgentProcess, str, str]:
    """An enrolled, approved agent started on a job of its own: (admin, agent, machine id, job id)."""
    admin = Admin(server.url)
    agent, machine_id = enrolled_agent(server, admin, home, "a")
    job_id = admin.job(SUITE, machine_id=machine_id)
    agent.start(ITERATIONS)
    return admin, agent, machine_id, job_id


def test_server_killed_mid_run_loses_and_duplicates_nothing(server: ServerProcess, tmp_path: Path) -> None:
    admin, agent, machine_id, job_id = agent_on_a_job(server, tmp_path)
    try:
        wait_for("two configs done", lambda: admin.get_job(job_id)["configs_done"] >= 2)
        server.kill()
        time.sleep(2.0)  # the agent measures on, and its progress reports and upload fail meanwhile
        server.start()
        admin = Admin(server.url)
        admin.wait_until_done(job_id)
    finally:
        agent.stop()
    results = admin.results(machine_id=machine_id)
    keys = [(r["workload"], r["batch_size"]) for r in results]
    assert len(results) == CONFIGS and len(set(keys)) == CONFIGS, agent.log()
    assert len({r["run_id"] for r in results}) == 1


def test_agent_killed_mid_job_is_requeued_and_completed_by_a_restarted_agent(
    server: ServerProcess, tmp_path: Path
) -> None:
    admin, agent, machine_id, job_id = agent_on_a_job(server, tmp_path)
    wait_for("a config done", lambda: admin.get_job(job_id)["configs_done"] >= 1)
    agent.kill()
    assert admin.get_job(job_id)["status"] == "running"
    agent.start(ITERATIONS)
    try:
        job = admin.wait_until_done(job_id)
    finally:
        assert agent.stop() == 0, agent.log()
    assert job["attempts"] == 2 and job["claimed_by"] == machine_id
    results = admin.results(machine_id=machine_id)
    runs = {r["run_id"] for r in results}
    assert len(runs) == 2, "the killed run's measurements were uploaded by the restarted agent"
    # the restarted agent uploaded them before it claimed the job again, and resumed it: every config once
    assert_each_config_once(results)
    assert "resumed" in job["message"], job["message"]


def test_two_agents_race_for_one_job_and_exactly_one_runs_it(server: ServerProcess, tmp_path: Path) -> None:
    admin = Admin(server.url)
    first, first_id = enrolled_agent(server, admin, tmp_path, "a")
    second, second_id = enrolled_agent(server, admin, tmp_path, "b")
    first.start(ITERATIONS)
    second.start(ITERATIONS)
    try:
        wait_for("both agents polling", lambda: all(admin.agent_state(m) == "idle" for m in (first_id, second_id)))
        job_id = admin.job(LONGER_THAN_THE_LEASE, selector={"cpu_arch": "x86_64"})
        job = admin.wait_until_done(job_id)
    finally:
        first.stop()
        second.stop()
    assert job["attempts"] == 1 and job["claimed_by"] in (first_id, second_id), (first.log(), second.log())
    winner, loser = (first_id, second_id) if job["claimed_by"] == first_id else (second_id, first_id)
    assert len(admin.results(machine_id=winner)) == 1
    assert admin.results(machine_id=loser) == []


@ON_SQLITE
def test_bad_tokens_exit_non_zero_with_a_clear_message_and_store_nothing(server: ServerProcess, tmp_path: Path) -> None:
    admin = Admin(server.url)
    wrong = AgentProcess(tmp_path, "wrong").command(
        "enroll", "--server", server.url, "--token", "hwa_enrollment_000000000000." + "A" * 43
    )
    assert wrong.returncode == 1 and "unknown token" in wrong.stderr and "Traceback" not in wrong.stderr

    pending = AgentProcess(tmp_path, "pending")
    pending_id = pending.enroll(server.url, admin.enrollment_token())
    admin.job(SUITE, machine_id=pending_id)
    refused = pending.command("run", "--once", "--no-quiet-check")
    assert refused.returncode == 1 and "pending" in refused.stderr and "approve" in refused.stderr

    revoked, revoked_id = enrolled_agent(server, admin, tmp_path, "revoked")
    admin.http.post(f"/api/v1/machines/{revoked_id}/retire").raise_for_status()
    gone = revoked.command("run", "--once", "--no-quiet-check")
    assert gone.returncode == 1 and "revoked" in gone.stderr

    assert admin.results() == []
    assert admin.http.get("/api/v1/machines").json()["total"] == 2


@ON_SQLITE
def test_sigterm_mid_job_finishes_the_config_uploads_and_hands_the_job_back(
    server: ServerProcess, tmp_path: Path
) -> None:
    admin, agent, machine_id, job_id = agent_on_a_job(server, tmp_path)
    wait_for("a config done", lambda: admin.get_job(job_id)["configs_done"] >= 1)
    assert agent.stop() == 0, agent.log()
    job = admin.get_job(job_id)
    assert job["status"] == "queued" and "handed back" in job["message"]
    results = admin.results(machine_id=machine_id)
    assert 1 <= len(results) < CONFIGS, "the configs that finished were uploaded before exiting"
    assert all(r["status"] == "ok" for r in results)
    # the next agent on the machine resumes the job: it measures the configs the first left, not all again
    job = resumed_to_the_end(agent, admin, job_id)
    assert f"resumed: {len(results)} configs an earlier attempt measured" in job["message"], job["message"]
    assert_each_config_once(admin.results(machine_id=machine_id))


def resumed_to_the_end(agent: AgentProcess, admin: Admin, job_id: str) -> dict[str, Any]:
    """`agent run --once` on a job an earlier attempt handed back: the job, done on its second attempt with
    every config counted."""
    again = agent.command("run", "--once", "--no-quiet-check", ITERATIONS)
    assert again.returncode == 0, again.stderr
    job = admin.get_job(job_id)
    assert job["status"] == "done" and job["attempts"] == 2, job
    assert job["configs_done"] == job["configs_total"] == CONFIGS
    return job


def assert_each_config_once(results: list[dict[str, Any]]) -> None:
    keys = [(r["workload"], r["batch_size"]) for r in results]
    assert len(keys) == CONFIGS and len(set(keys)) == CONFIGS, keys


@pytest.fixture(params=BACKENDS)
def strict_server(request: pytest.FixtureRequest, scratch: ScratchDatabases, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A server that takes at most 3 results in a run."""
    process = ServerProcess(scratch.new(request.param), tmp_path, env={"HWADVISOR_MAX_RESULTS_PER_RUN": "3"}).start()
    yield process
    process.stop()


def queue_run(outbox_path: Path, spec: MachineSpec, results: int, job_id: uuid.UUID | None = None) -> uuid.UUID:
    """A finished run left in the agent's outbox, as a killed or refused agent leaves it."""
    outbox = Outbox(outbox_path)
    try:
        run_id = outbox.open_run(suite="tiny", agent_version="0.1.0", machine=spec, job_id=job_id)
        for seq in range(results):
            outbox.add_result(run_id, seq, result(device="cpu", precision="fp32", batch_size=seq + 1))
        outbox.close_run(run_id)
        return run_id
    finally:
        outbox.close()


@pytest.mark.parametrize("strict_server", ["sqlite"], indirect=True)
def test_runs_the_server_refuses_are_quarantined_and_the_runs_behind_them_are_delivered(
    strict_server: ServerProcess, tmp_path: Path
) -> None:
    admin = Admin(strict_server.url)
    agent, machine_id = enrolled_agent(strict_server, admin, tmp_path, "a")
    agent.config.chmod(0o644)
    outbox = agent.home / "outbox.db"
    spec = probe_machine()
    unknown_job = queue_run(outbox, spec, results=1, job_id=uuid.uuid4())  # 409
    too_large = queue_run(outbox, spec, results=4)  # 413
    behind = queue_run(outbox, spec, results=2)

    first = agent.command("run", "--once", "--no-quiet-check")
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    assert [r["run_id"] for r in admin.results(machine_id=machine_id)] == [str(behind)] * 2
    for run_id, status in ((unknown_job, 409), (too_large, 413)):
        assert f"the server refused run {run_id}" in first.stderr and f"({status})" in first.stderr
    assert "quarantined" in first.stderr and f"chmod 600 {agent.config}" in first.stderr

    again = agent.command("run", "--once", "--no-quiet-check")
    assert again.returncode == 0 and "refused run" not in again.stderr, again.stderr
    listed = agent.command("outbox")
    assert listed.returncode == 0 and "2 run(s) quarantined" in listed.stdout
    assert str(unknown_job) in listed.stdout and "(409)" in listed.stdout and "(413)" in listed.stdout

    admin.http.post(f"/api/v1/machines/{machine_id}/retire").raise_for_status()
    kept = queue_run(outbox, spec, results=1)
    retired = agent.command("run", "--once", "--no-quiet-check")
    assert retired.returncode == 1 and "revoked" in retired.stderr and "are kept" in retired.stderr, retired.stderr
    box = Outbox(outbox)
    assert box.state_of(kept) == "ready" and box.pending() == 1, "a refused credential quarantines nothing"
    box.close()


@ON_SQLITE
def test_a_job_cancelled_mid_run_stops_its_agent_after_the_config_it_is_measuring(
    server: ServerProcess, tmp_path: Path
) -> None:
    admin, agent, machine_id, job_id = agent_on_a_job(server, tmp_path)
    try:
        wait_for("a config done", lambda: admin.get_job(job_id)["configs_done"] >= 1)
        admin.http.post(f"/api/v1/jobs/{job_id}/cancel").raise_for_status()
        wait_for("the agent idle again", lambda: admin.agent_state(machine_id) == "idle")
    finally:
        assert agent.stop() == 0, agent.log()
    assert admin.get_job(job_id)["status"] == "cancelled"
    assert f"job {job_id} was cancelled after" in agent.log()
    assert len(admin.results(machine_id=machine_id)) < CONFIGS, "the configs after the cancel were not measured"


@ON_SQLITE
def test_a_job_an_earlier_attempt_stored_whole_is_done_without_measuring_or_an_empty_run(
    server: ServerProcess, tmp_path: Path
) -> None:
    admin = Admin(server.url)
    agent, machine_id = enrolled_agent(server, admin, tmp_path, "a")
    job_id = admin.job(SUITE, machine_id=machine_id)
    # the earlier attempt, as the machine's own credential makes it: every config measured and stored,
    # then the job handed back before it could be reported done (an agent stopped at that moment)
    token = json.loads(agent.config.read_text())["token"]
    with AgentClient(server.url, token) as client:
        claimed = client.claim()
        assert claimed is not None and str(claimed.id) == job_id and claimed.lease_s == LEASE_S
        machine = probe_machine()
        started = datetime.now(UTC)
        suite = parse_suite(SUITE, "the test's suite")
        run = run_suite(suite, machine, fixed_iterations=1)
        assert len(run.results) == CONFIGS
        report = run_report(suite, machine, run, started_at=started)
        client.upload_run(report.model_copy(update={"job_id": claimed.id}))
        client.finish(claimed.id, JobStatus.queued, "stopped before it could say done")
    job = resumed_to_the_end(agent, admin, job_id)
    assert f"all {CONFIGS} configs were measured by an earlier attempt" in job["message"], job["message"]
    assert {r["run_id"] for r in admin.results(machine_id=machine_id)} == {str(report.run_id)}
    engine = create_engine(server.env["HWADVISOR_DATABASE_URL"])
    with engine.connect() as conn:
        runs = conn.execute(text("SELECT count(*) FROM runs")).scalar_one()
    engine.dispose()
    assert runs == 1, "no empty run was stored beside the one that holds every config"


def _refuse_runs(database_url: str, refuse: bool) -> None:
    """Make the server's database refuse (or take again) every run: a persistent 5xx on upload."""
    engine = create_engine(database_url)
    sqlite = engine.dialect.name == "sqlite"
    if refuse:
        statements = (
            ["CREATE TRIGGER refuse_runs BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"]
            if sqlite
            else [
                "CREATE FUNCTION refuse_runs() RETURNS trigger LANGUAGE plpgsql AS"
                " $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$",
                "CREATE TRIGGER refuse_runs BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION refuse_runs()",
            ]
        )
    else:
        statements = ["DROP TRIGGER refuse_runs"] if sqlite else ["DROP TRIGGER refuse_runs ON runs"]
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))
    engine.dispose()


def test_a_server_that_keeps_failing_uploads_fails_the_job_and_the_run_is_delivered_later(
    server: ServerProcess, tmp_path: Path
) -> None:
    admin = Admin(server.url)
    agent, machine_id = enrolled_agent(server, admin, tmp_path, "a")
    settings = json.loads(agent.config.read_text())
    agent.config.write_text(json.dumps({**settings, "job_upload_attempts": 2}))
    database_url = server.env["HWADVISOR_DATABASE_URL"]
    _refuse_runs(database_url, True)
    job_id = admin.job(ONE_CONFIG, machine_id=machine_id)
    agent.start(ITERATIONS)
    try:
        job = wait_for(
            "the job to fail",
            lambda: (j := admin.get_job(job_id))["status"] == "failed" and j,
            timeout_s=90,
        )
        assert "stays in the agent's outbox" in job["message"] and "500" in job["message"], job["message"]
        assert admin.results(machine_id=machine_id) == []
        _refuse_runs(database_url, False)
        delivered = wait_for("the run to be delivered", lambda: admin.results(machine_id=machine_id), timeout_s=30)
    finally:
        assert agent.stop() == 0, agent.log()
    assert len(delivered) == 1 and delivered[0]["status"] == "ok"


@ON_SQLITE
def test_reenrolling_with_its_own_config_rotates_the_token_and_a_stranger_waits_for_an_admin(
    server: ServerProcess, tmp_path: Path
) -> None:
    """The agent proves it is the machine's own by sending its current token; the same hardware
    enrolled from a config-less copy (a stranger who knows the fingerprint) is held for approval."""
    admin = Admin(server.url)
    agent, machine_id = enrolled_agent(server, admin, tmp_path, "rotating")
    old_token = json.loads(agent.config.read_text())["token"]

    again = agent.command("enroll", "--server", server.url, "--token", admin.enrollment_token())
    assert again.returncode == 0, again.stderr
    assert f"machine {machine_id} (" in again.stdout and "pending" not in again.stdout
    new_token = json.loads(agent.config.read_text())["token"]
    assert new_token != old_token
    assert agent.command("run", "--once", "--no-quiet-check").returncode == 0

    stranger = AgentProcess(tmp_path / "stranger", "rotating")
    held = stranger.command("enroll", "--server", server.url, "--token", admin.enrollment_token())
    assert held.returncode == 0 and "pending" in held.stdout and "approve" in held.stdout
    assert agent.command("run", "--once", "--no-quiet-check").returncode == 0, "the real agent keeps working"
