"""Slow and greedy clients against the real server process (app/server/connections.py): a connection
that says nothing, a head sent a line at a time, a body that stops, each closed; one address over its
share of connections, where a newcomer takes a stalled connection's place (or is refused when every
one is inside a request); a slow upload that keeps moving, and keep-alive, untouched."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testkit.factories import Api, machine_spec, result, run_report
from testkit.processes import ADMIN, server_process
from tests.conftest import ScratchDatabases

READ_TIMEOUT_S = 2.0
CAP = 4
POST_TOKENS = (
    b"POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Authorization: Bearer hwa_admin_000000000000.wrong\r\n"
)
"""A request whose body the server reads (a body sent with no credentials at all is refused before it
is read, app/server/limits.py); its token is wrong, so what is read is then refused."""


@pytest.fixture(scope="module")
def base(scratch: ScratchDatabases, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {"HWADVISOR_READ_TIMEOUT_S": str(READ_TIMEOUT_S), "HWADVISOR_MAX_CLIENT_CONNECTIONS": str(CAP)}
    with server_process(scratch.new("sqlite"), tmp_path_factory.mktemp("server"), env=env) as url:
        yield url


def _connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=15)


def _closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes the connection (reads return nothing), reading what it sends."""
    start = time.monotonic()
    while sock.recv(4096):
        pass
    return time.monotonic() - start


def _trickle(sock: socket.socket, pieces: list[bytes]) -> None:
    """Send ``pieces`` one every 0.5 s, and expect the server to close the connection before the last
    (a send fails, or a read finds the end)."""
    with pytest.raises(OSError):
        for piece in pieces:
            sock.sendall(piece)
            time.sleep(0.5)
            sock.setblocking(False)
            try:
                if sock.recv(4096) == b"":
                    raise ConnectionResetError("closed by the server")
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)


def _answer(sock: socket.socket) -> bytes:
    """One whole answer (head and its Content-Length of body)."""
    data = b""
    while b"\r\n\r\n" not in data or len(data) < _length(data):
        chunk = sock.recv(4096)
        assert chunk, f"closed before an answer: {data!r}"
        data += chunk
    return data


def _length(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(head) + 4


def test_a_connection_that_sends_nothing_is_closed(base: str) -> None:
    with _connect(base) as sock:
        waited = _closed_after(sock)
    assert READ_TIMEOUT_S * 0.8 <= waited < READ_TIMEOUT_S + 8


def test_a_head_sent_a_line_at_a_time_is_closed_though_it_keeps_coming(base: str) -> None:
    with _connect(base) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        start = time.monotonic()
        _trickle(sock, [f"X-Slow-{i}: 1\r\n".encode() for i in range(40)])  # 20 s of lines, each well in time
        assert time.monotonic() - start < READ_TIMEOUT_S + 8


def test_a_body_that_goes_quiet_is_closed_and_one_that_keeps_moving_is_read(base: str) -> None:
    head = POST_TOKENS + b"Content-Length: 40\r\n\r\n"
    with _connect(base) as quiet:
        quiet.sendall(head + b"{")
        waited = _closed_after(quiet)
    assert READ_TIMEOUT_S * 0.8 <= waited < READ_TIMEOUT_S + 8

    size, chunk = 160 * 1024, 16 * 1024
    long_head = head.replace(b"Content-Length: 40", f"Content-Length: {size}".encode())
    with _connect(base) as slow:
        slow.sendall(long_head)
        body = b'{"kind": "enrollment"}'.ljust(size)
        for i in range(0, size, chunk):  # 32 KiB/s for 5 s: longer than the timeout, never quiet for as long
            time.sleep(0.5)
            slow.sendall(body[i : i + chunk])
        answer = _answer(slow)
    assert answer.startswith(b"HTTP/1.1 401"), answer  # read whole, then refused for its wrong token


def test_a_body_trickled_a_byte_at_a_time_is_closed_though_never_quiet_for_long(base: str) -> None:
    head = POST_TOKENS + b"Content-Length: 40\r\n\r\n"
    with _connect(base) as rudy:
        rudy.sendall(head)
        start = time.monotonic()
        _trickle(rudy, [b" "] * 40)  # a byte every 0.5 s: 20 s for the body, never quiet for the timeout
        assert time.monotonic() - start < READ_TIMEOUT_S + 8


def test_a_chunked_body_to_a_plain_route_has_that_route_s_allowance_not_an_upload_s(
    scratch: ScratchDatabases, tmp_path: Path
) -> None:
    """Without a declared length the deadline is the largest body the route takes at MIN_BODY_RATE: 16 KiB
    here, a second; every route had the ONNX upload's 64 MiB, more than an hour."""
    env = {"HWADVISOR_READ_TIMEOUT_S": str(READ_TIMEOUT_S), "HWADVISOR_MAX_BODY_BYTES": str(16 * 1024)}
    with server_process(scratch.new("sqlite"), tmp_path, env=env) as url, _connect(url) as chunked:
        chunked.sendall(POST_TOKENS + b"Transfer-Encoding: chunked\r\n\r\n")
        start = time.monotonic()
        _trickle(chunked, [b"1\r\n \r\n"] * 40)  # a chunk every 0.5 s: 20 s, never quiet for the timeout
        assert time.monotonic() - start < READ_TIMEOUT_S + 1 + 8


def test_over_its_share_an_address_s_newest_connection_takes_the_place_of_its_oldest_stalled_one(base: str) -> None:
    stalled = [_connect(base) for _ in range(CAP)]
    try:
        for sock in stalled:
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # a head begun, not finished
            time.sleep(0.05)  # in this order
        with _connect(base) as newcomer:  # a client behind the same address (a NAT, a proxy, this host)
            newcomer.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _answer(newcomer).startswith(b"HTTP/1.1 200")
        assert _closed_after(stalled[0]) < READ_TIMEOUT_S * 0.8  # the oldest made room, before its deadline
    finally:
        for sock in stalled:
            sock.close()


def test_over_its_share_an_address_whose_connections_are_all_inside_requests_is_refused(base: str) -> None:
    head = POST_TOKENS + b"Content-Length: 40\r\n\r\n"
    busy = [_connect(base) for _ in range(CAP)]
    try:
        for sock in busy:
            sock.sendall(head)  # inside a request: its body still to come
        time.sleep(0.2)
        with _connect(base) as extra:
            assert _closed_after(extra) < READ_TIMEOUT_S * 0.8  # closed at once, not at the deadline
    finally:
        for sock in busy:
            sock.close()
    time.sleep(0.5)  # the server sees the closes
    assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200


def test_a_kept_alive_connection_may_wait_longer_than_the_read_timeout_between_requests(base: str) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    with _connect(base) as sock:
        sock.sendall(request)
        assert _answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(READ_TIMEOUT_S * 1.5)  # idle between requests: uvicorn's keep-alive (5 s) rules, not ours
        sock.sendall(request)
        assert b"HTTP/1.1 200" in _answer(sock)


def test_an_answer_the_client_stops_reading_is_dropped(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as http:  # an export larger than the kernels buffer
        api = Api(http, ADMIN)
        spec = machine_spec()
        _machine, token = api.enroll(spec)
        for _ in range(6):
            results = [result(batch_size=b) for b in range(1, 5001)]
            assert api.post_run(token, run_report(spec, results=results)).status_code == 201
        reader = api.bearer(api.token("readonly"))["Authorization"]
        started = time.monotonic()
        whole = http.get("/api/v1/results/export.csv", headers={"Authorization": reader})
        writing_s = time.monotonic() - started  # what the server takes to make and send it all, on this machine
    assert whole.status_code == 200 and whole.text.count("\n") > 30_000  # read as it comes, all of it arrives
    host, port = base.removeprefix("http://").split(":")
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window, set before connecting
        sock.settimeout(15)
        sock.connect((host, int(port)))
        sock.sendall(f"GET /api/v1/results/export.csv HTTP/1.1\r\nHost: x\r\nAuthorization: {reader}\r\n\r\n".encode())
        # reading nothing: long enough for the server to have filled every buffer (on a loaded machine making
        # the export takes seconds), then stalled for more than the read timeout
        time.sleep(2 * writing_s + READ_TIMEOUT_S * 2.5)
        got = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                got += chunk
    assert got.startswith(b"HTTP/1.1 200")
    assert not got.endswith(b"0\r\n\r\n")  # the chunked answer cut short: its last chunk never written
    assert got.count(b"\n") < 30_000  # nor all its rows
