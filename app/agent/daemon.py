"""The agent daemon: heartbeat, drain the outbox, claim a job, run its suite, upload, repeat.

- Network and disk work happen between configs, never inside a timed region.
- Each result goes to the outbox before anything is uploaded; uploads retry with exponential
  backoff and jitter, and are idempotent by run id, so a retry never duplicates.
- SIGTERM: the current config finishes, the partial run is uploaded, the job is handed back to
  the queue, and the process exits 0. After SIGKILL, the next start uploads what the killed run
  had measured, and the job comes back through its lease.
- Before a job the machine must be quiet (CPU use by others, other GPU processes); otherwise the
  agent reports ``busy`` and waits, rather than measure noise.
- A run the server refuses (4xx) is quarantined in the outbox and the runs behind it go on; a
  refused credential (401, or a machine not allowed to upload) stops the agent with every run kept.
  Inside a job, uploads are retried ``job_upload_attempts`` times; then the job is reported failed
  and the run waits in the outbox for a later turn of the loop.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

from app import __version__
from app.agent.client import AgentClient, ServerUnavailable
from app.agent.lease import UNSTATED_LEASE_S, LeaseKeeper
from app.agent.outbox import Outbox
from app.agent.quiet import busy_reason
from app.agent.settings import AgentSettings
from app.bench.runner import run_suite
from app.bench.suites import Suite, load_suite, parse_suite
from app.contracts import AgentState, Heartbeat, Job, JobStatus, MachineSpec, MachineStatus, Result, RunReport
from app.errors import AuthError, ConfigError, ForbiddenError, HwadvisorError
from app.probes import probe_machine

log = logging.getLogger("hwadvisor.agent")

BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 60.0
STOPPING_RETRIES = 3
REPROBE_S = 600.0
"""How often an idle agent looks at its hardware again (a job always starts with a fresh probe)."""


def backoff_delays(base_s: float = BACKOFF_BASE_S, cap_s: float = BACKOFF_CAP_S) -> Callable[[int], float]:
    """Full jitter (AWS architecture blog): a random wait in [0, min(cap, base * 2^attempt)]."""

    def delay(attempt: int) -> float:
        return random.uniform(0, min(cap_s, base_s * 2**attempt))

    return delay


@dataclass
class Agent:
    settings: AgentSettings
    client: AgentClient
    outbox: Outbox
    fixed_iterations: int | None = None
    """Exactly this many timed iterations per config, whatever the suite says (for quick checks)."""
    stop: threading.Event = field(default_factory=threading.Event)
    delay: Callable[[int], float] = field(default_factory=backoff_delays)
    spec: MachineSpec | None = None
    last_delivery_error: HwadvisorError | None = None
    """Why the last upload that failed did, for the job's message."""
    _sent_spec: str | None = None
    _probed_at: float = 0.0
    _state: AgentState = AgentState.idle

    # ------------------------------------------------------------------ plumbing

    def _beat(self, state: AgentState, note: str | None = None) -> None:
        if self.spec is None or time.monotonic() - self._probed_at > REPROBE_S:
            self.spec = probe_machine()
            self._probed_at = time.monotonic()
        self._state = state
        changed = self.spec.model_dump_json() != self._sent_spec
        beat = Heartbeat(state=state, note=note or self.quarantine_note(), spec=self.spec if changed else None)
        try:
            self.client.heartbeat(beat)
            self._sent_spec = self.spec.model_dump_json()
        except ServerUnavailable as exc:
            log.warning("heartbeat failed: %s", exc)

    def quarantine_note(self) -> str | None:
        """What the heartbeat says while the outbox holds runs the server refused."""
        held = self.outbox.quarantined()
        if not held:
            return None
        latest = held[-1]
        note = (
            f"{len(held)} run(s) refused by the server, kept in quarantine in {self.outbox.path}"
            f" (latest {latest.run_id}: {latest.reason[:300]}); see `hwadvisor agent outbox` on this machine"
        )
        return note[:2000]

    def drain(self, *, until_empty: bool = False, attempts: int | None = None) -> bool:
        """Upload every ready run; True when none is left waiting.

        With until_empty, a server that cannot take them is retried with backoff until it does, at
        most ``attempts`` times, or, once the agent is told to stop, a few more times: what is left
        stays in the outbox for the next turn or the next start."""
        attempt = 0
        while True:
            failure = self._deliver_ready()
            if failure is None:
                return True
            self.last_delivery_error = failure
            if not until_empty or (self.stop.is_set() and attempt >= STOPPING_RETRIES):
                log.warning("upload deferred, kept in the outbox: %s", failure)
                return False
            if attempts is not None and attempt + 1 >= attempts:
                log.warning("upload failed %d times, kept in the outbox for later: %s", attempt + 1, failure)
                return False
            wait = self.delay(attempt)
            attempt += 1
            log.warning("upload failed (%s); retrying in %.1f s", failure, wait)
            if self.stop.is_set():
                time.sleep(min(wait, 1.0))
            else:
                self.stop.wait(wait)

    def _deliver_ready(self) -> ServerUnavailable | None:
        """One pass over the ready runs: upload, or quarantine what the server refuses. The last
        failure worth retrying, or None. A server that cannot be reached ends the pass; one that
        answered 5xx for one run may take the next."""
        failure = None
        for report in self.outbox.ready():
            try:
                stored, created = self.client.upload_run(report)
            except ServerUnavailable as exc:
                failure = exc
                if not exc.reachable:
                    break
                continue
            except HwadvisorError as exc:
                try:
                    self._refused(report, exc)
                except ServerUnavailable as unknown:  # could not ask whether the machine may still upload
                    failure = unknown
                    break
                continue
            self.outbox.delete(report.run_id)
            log.info("uploaded run %s (%s)", stored.run_id, "new" if created else "already stored")
        return failure

    def _refused(self, report: RunReport, exc: HwadvisorError) -> None:
        """The server refused an upload. A refusal of this agent (its token, its machine's standing)
        stops the agent and keeps every run; a refusal of this run sets the run aside."""
        if isinstance(exc, AuthError) and not self._may_upload(exc):
            left = self.outbox.pending()
            raise type(exc)(
                f"{exc.message}; the {left} run(s) in the outbox {self.outbox.path} are kept and sent once the"
                " server accepts this agent again",
                hint=exc.hint,
            ) from exc
        self.outbox.quarantine(report.run_id, str(exc), exc.status_code)
        log.error(
            "the server refused run %s (job %s, %d results): %s. It is quarantined, kept on disk in %s;"
            " the runs behind it go on (`hwadvisor agent outbox` lists it and can send it again)",
            report.run_id,
            report.job_id or "none",
            len(report.results),
            exc,
            self.outbox.path,
        )

    def _may_upload(self, exc: AuthError) -> bool:
        """After a 403 on an upload: is this machine still allowed to upload at all? (A 401 means the
        token itself is refused.) Asked with a heartbeat, which pending machines may send too."""
        if not isinstance(exc, ForbiddenError):
            return False
        try:
            reply = self.client.heartbeat(Heartbeat(state=self._state))
        except ServerUnavailable:
            raise
        except HwadvisorError:
            return False
        return reply.status not in (MachineStatus.pending, MachineStatus.retired)

    # ------------------------------------------------------------------ jobs

    def suite_of(self, job: Job) -> Suite:
        return parse_suite(job.suite_toml, f"job {job.id}'s suite") if job.suite_toml else load_suite(job.suite)

    def run_job(self, job: Job) -> None:
        self.spec = probe_machine()
        self._probed_at = time.monotonic()
        try:
            suite = self.suite_of(job)
        except ConfigError as exc:
            self._finish(job, JobStatus.failed, f"this agent cannot run the job's suite: {exc}")
            return
        run_id = self.outbox.open_run(suite=suite.name, agent_version=__version__, machine=self.spec, job_id=job.id)
        self._state = AgentState.running

        def on_result(index: int, total: int, result: Result) -> None:
            self.outbox.add_result(run_id, index, result)
            lease.report(index, total)

        with LeaseKeeper(self.client, job.id, job.lease_s or UNSTATED_LEASE_S) as lease:
            run = run_suite(
                suite,
                self.spec,
                fixed_iterations=self.fixed_iterations,
                on_result=on_result,
                should_stop=lambda: self.stop.is_set() or lease.lost,
                skip=frozenset(job.measured),
            )
            resumed = f" (resumed: {run.skipped} configs an earlier attempt measured were not measured again)"
            resumed = resumed if run.skipped else ""
            nothing_left = 0 < run.skipped == run.total and not run.interrupted
            if nothing_left:  # the earlier attempts' runs hold every config: no empty run beside them
                self.outbox.delete(run_id)
                lease.report(run.total, run.total)
            else:
                self.outbox.close_run(run_id)
                self.last_delivery_error = None
                self.drain(until_empty=True, attempts=self.settings.job_upload_attempts)
        self._state = AgentState.idle
        if lease.lost:
            why = "was cancelled" if lease.cancelled else "is no longer this machine's (its lease lapsed)"
            log.info("job %s %s after %d configs", job.id, why, len(run.results))
            return
        left = self.outbox.state_of(run_id)
        if run.interrupted:
            message = f"agent stopped after {len(run.results)} configs{resumed}; handed back to the queue"
            self._finish(job, JobStatus.queued, message)
        elif left == "quarantined":
            (held,) = [q for q in self.outbox.quarantined() if q.run_id == run_id]
            message = (
                f"the server refused run {run_id} ({len(run.results)} results): {held.reason}; the agent keeps it"
                " in its outbox's quarantine (hwadvisor agent outbox)"
            )
            self._finish(job, JobStatus.failed, message)
        elif left is not None:
            message = (
                f"measured {len(run.results)} configs, but the server did not store run {run_id} after"
                f" {self.settings.job_upload_attempts} tries ({self.last_delivery_error}); the run stays in"
                " the agent's outbox and is uploaded when the server takes it"
            )
            log.warning("job %s: %s", job.id, message)
            self._finish(job, JobStatus.failed, message)
        elif nothing_left:
            message = f"resumed: all {run.total} configs were measured by an earlier attempt; none measured again"
            self._finish(job, JobStatus.done, message)
        else:
            self._finish(job, JobStatus.done, f"{len(run.results)} results in run {run_id}{resumed}")

    def _finish(self, job: Job, status: JobStatus, message: str) -> None:
        try:
            self.client.finish(job.id, status, message[:2000])
        except HwadvisorError as exc:
            log.warning("could not report job %s as %s: %s", job.id, status.value, exc)

    # ------------------------------------------------------------------ loop

    def step(self, *, once: bool = False) -> bool:
        """One turn of the loop; True when it ran a job. With once, a server that cannot be asked for
        a job is an error (a one-shot run that could not look has failed), not a reason to poll again."""
        self.drain()
        if self.settings.quiet_check:
            reason = busy_reason(self.settings.max_busy_cpu_percent)
            if reason:
                log.info("machine busy, not measuring: %s", reason)
                self._beat(AgentState.busy, reason)
                return False
        self._beat(AgentState.idle)
        try:
            job = self.client.claim()
        except ServerUnavailable as exc:
            if once:
                raise
            log.warning("claim failed: %s", exc)
            return False
        if job is None:
            return False
        log.info("claimed job %s (suite %s, attempt %d)", job.id, job.suite, job.attempts)
        self.run_job(job)
        return True

    def run(self, *, once: bool = False) -> None:
        recovered = self.outbox.recover()
        if recovered:
            log.info("found %d run(s) a previous agent left; uploading them", recovered)
        self.drain(until_empty=False)
        while not self.stop.is_set():
            ran = self.step(once=once)
            if once and not ran:
                break
            if not ran:
                self.stop.wait(self.settings.poll_interval_s)
        self.drain(until_empty=False)


def install_signal_handlers(agent: Agent) -> None:
    def on_term(signum: int, _frame: FrameType | None) -> None:
        log.info("signal %d: finishing the current config, then uploading and exiting", signum)
        agent.stop.set()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)


def run_agent(settings: AgentSettings, *, once: bool = False, fixed_iterations: int | None = None) -> None:
    outbox = Outbox(settings.outbox)
    with AgentClient(settings.server, settings.token) as client:
        agent = Agent(settings, client, outbox, fixed_iterations=fixed_iterations)
        install_signal_handlers(agent)
        try:
            agent.run(once=once)
        finally:
            outbox.close()
