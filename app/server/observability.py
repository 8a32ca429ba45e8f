"""Request ids, structured logs and Prometheus metrics.

Every request gets an id (the caller's ``X-Request-ID`` when it is a sane token, else a new one),
sent back in the response header and in any problem body, and attached to every log line written
while the request runs. ``/metrics`` exposes request counts and latency per route template, results
ingested, and, read from the database at scrape time (so that every worker reports the same),
the job queue by state and the machines by status.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.contracts import JobStatus
from app.db.engine import Database
from app.db.models import JobRow, ResultRow

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
_SANE_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""The methods a metric or log line names as sent; any other is ``OTHER``. The HTTP server passes on
whatever token a client puts there, and a label per distinct value would let anyone grow every later
scrape without bound."""


MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


class Metrics:
    """The server's metrics, in a registry of its own (one per app, so tests do not share counters)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "hwadvisor_http_requests", "HTTP requests", ["method", "route", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "hwadvisor_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.results_ingested = Counter(
            "hwadvisor_results_ingested", "Results stored from newly ingested runs", registry=self.registry
        )

    def watch(self, db: Database) -> None:
        self.database = DatabaseCollector(db)
        self.registry.register(self.database)

    def render(self) -> bytes:
        """This process's metrics; with several workers (PROMETHEUS_MULTIPROC_DIR set, as
        `hwadvisor server --workers N` does), every worker's counters summed, whichever one is asked."""
        if not os.environ.get(MULTIPROC_ENV):
            return generate_latest(self.registry)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        if getattr(self, "database", None) is not None:
            registry.register(self.database)
        return generate_latest(registry)


class DatabaseCollector(Collector):
    """Gauges read from the database when scraped."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from app.db.machines import count_by_status

        jobs = GaugeMetricFamily("hwadvisor_jobs", "Jobs by state", labels=["state"])
        machines = GaugeMetricFamily("hwadvisor_machines", "Machines by status", labels=["status"])
        results = GaugeMetricFamily("hwadvisor_results", "Results stored")
        with self.db.reading() as session:
            by_state = dict(session.execute(select(JobRow.status, func.count()).group_by(JobRow.status)).all())
            by_status = count_by_status(session)
            results.add_metric([], float(session.scalar(select(func.count(ResultRow.id))) or 0))
        for state in JobStatus:
            jobs.add_metric([state.value], float(by_state.get(state.value, 0)))
        for status, count in by_status.items():
            machines.add_metric([status.value], float(count))
        yield jobs
        yield machines
        yield results


class RequestContext:
    """ASGI middleware: request id, access log line, request metrics."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        self.log = logging.getLogger("hwadvisor.access")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        rid = incoming if _SANE_ID.match(incoming) else uuid.uuid4().hex
        token = request_id.set(rid)
        status = 500
        start = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - start
            route = route_template(scope)
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.latency.labels(method, route).observe(elapsed)
            self.log.info(
                "%s %s %d %.1f ms",
                method,
                route,
                status,
                elapsed * 1000,
                extra={"method": method, "route": route, "status": status, "ms": round(elapsed * 1000, 2)},
            )
            request_id.reset(token)


def route_template(scope: Scope) -> str:
    """The matched route's template with its router prefix ('/api/v1/machines/{machine_id}'), so
    that metrics are labelled per route, not per id. FastAPI includes routers lazily and the
    matched route knows only its path inside its router: the prefix is the concrete path's leading
    segments that the template does not cover (no route here has a parameter spanning segments)."""
    inner = getattr(scope.get("route"), "path", None)
    if not inner:
        return "unmatched"
    segments = str(scope["path"]).rstrip("/").split("/")
    depth = inner.rstrip("/").count("/")
    return "/".join(segments[: len(segments) - depth]) + str(inner)


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request id and any structured extras."""

    EXTRAS = ("method", "route", "status", "ms")

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        data.update({key: getattr(record, key) for key in self.EXTRAS if hasattr(record, key)})
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data)


def configure_logging(fmt: str) -> None:
    """Plain or JSON lines on stderr for the hwadvisor loggers, each with its request id."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    root = logging.getLogger("hwadvisor")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False
