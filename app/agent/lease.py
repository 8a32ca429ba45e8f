"""Keep a claimed job's lease while the agent works on it.

The server hands a claimed job back to the queue when its lease runs out without progress. Progress
comes after each config, so a config longer than the lease (a large training config, a first config
that builds its model on a loaded machine) would lose the job to another machine half-way, and the
same configs would be measured twice. The keeper reports progress after each config, as before, and
when nothing was reported for a third of the lease it reports the last progress again from a thread.
That renewal is one small request, and only in a config longer than a third of the lease (100 s by
default): the timed regions of ordinary configs never share the machine with it.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from types import TracebackType

from app.agent.client import AgentClient, ServerUnavailable
from app.contracts import JobStatus
from app.errors import AuthError, HwadvisorError

log = logging.getLogger("hwadvisor.agent")

UNSTATED_LEASE_S = 300.0
"""The server's default lease, for a server that does not state its own."""
MIN_RENEW_S = 0.5
"""Never renew more often than this, whatever lease the server states."""


class LeaseKeeper:
    """Reports a job's progress and renews its lease between reports; ``lost`` once the job is not
    this agent's to run any more (cancelled, or its lease lapsed and it went elsewhere)."""

    def __init__(self, client: AgentClient, job_id: uuid.UUID, lease_s: float) -> None:
        self.client = client
        self.job_id = job_id
        self.renew_s = max(MIN_RENEW_S, lease_s / 3)
        self.lost = False
        self.cancelled = False
        self._done = 0
        self._total: int | None = None
        self._reported_at = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name=f"lease-{job_id}", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(
        self, _type: type[BaseException] | None, _exc: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def report(self, done: int, total: int) -> None:
        """Configs done so far (after each config)."""
        with self._lock:
            self._done, self._total = done, total
            self._send()

    def _renew(self) -> None:
        while not self._stop.wait(self.renew_s / 4):
            with self._lock:
                if not self.lost and time.monotonic() - self._reported_at >= self.renew_s:
                    self._send()

    def _send(self) -> None:
        """Report the last progress (under the lock). A server that cannot be reached is tried again at
        the next renewal; an answer that the job is no longer ours stops the run."""
        self._reported_at = time.monotonic()
        try:
            state = self.client.progress(self.job_id, self._done, self._total)
        except ServerUnavailable as exc:
            log.warning("progress report failed (the job's lease may lapse): %s", exc)
            return
        except AuthError as exc:  # the lease lapsed and the job went elsewhere, or the machine was retired
            log.warning("job %s is no longer ours: %s", self.job_id, exc)
            self.lost = True
            return
        except HwadvisorError as exc:
            log.warning("progress report refused: %s", exc)
            return
        if state.status is JobStatus.cancelled:
            self.cancelled = self.lost = True
