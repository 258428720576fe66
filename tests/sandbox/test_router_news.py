"""The router output a real-podman host's controller follows through the podman API: the
answer read as podman 4.3.1 sends it, in any cut, and what in it is news."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from skupper_sandbox.emulated import podman_api
from skupper_sandbox.emulated.router_containers import ApiContainers, _Followed
from skupper_sandbox.emulated.router_news import LogFrames, StreamError, is_news

#: What podman 4.3.1 answered to ``GET /v4.0.0/containers/<router>/logs?follow=1&stdout=1
#: &stderr=1&tail=0`` when a TLS probe reached the router's link port: the head once the
#: first line came, then one chunk holding one frame (stream 2, 0xdb bytes).
HEAD = (
    b"HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nLibpod-Api-Version: 4.3.1\r\n"
    b"Server: Libpod/4.3.1 (linux)\r\nX-Reference-Id: 0xc000728000\r\n"
    b"Date: Fri, 04 Dec 2026 23:44:01 GMT\r\nContent-Type: application/octet-stream\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
)
PROBED = (
    b"2026-12-04 23:44:01.013653 +0000 SERVER (error) [C3] Connection from 127.0.0.1:40604"
    b" (to 127.64.135.1:55671) failed: amqp:connection:framing-error SSL Failure:"
    b" error:0A000410:SSL routines::sslv3 alert handshake failure\n"
)
OPENED = (
    b"2026-12-04 23:40:52.202722 +0000 SERVER (info) [C8] Connection to 127.30.32.3:55671"
    b" (inter-router) opened, peer hub-rhtevan-work-1796427649-204609124\n"
)


def chunk(*frames: bytes, stream: int = 2) -> bytes:
    body = b"".join(bytes([stream, 0, 0, 0]) + len(f).to_bytes(4, "big") + f for f in frames)
    return f"{len(body):x}\r\n".encode() + body + b"\r\n"


def test_the_recorded_answer_gives_its_line() -> None:
    assert chunk(PROBED) == (
        b"e3\r\n\x02\x00\x00\x00\x00\x00\x00\xdb" + PROBED + b"\r\n"
    )  # the recorded bytes
    frames = LogFrames()
    assert frames.feed(HEAD + chunk(PROBED)) == [PROBED.rstrip(b"\n")]
    assert not frames.ended


def test_any_cut_gives_the_same_lines() -> None:
    answer = HEAD + chunk(PROBED) + chunk(OPENED, stream=1) + chunk(OPENED[:40], OPENED[40:])
    frames = LogFrames()
    lines = [line for i in range(len(answer)) for line in frames.feed(answer[i : i + 1])]
    assert lines == [PROBED.rstrip(b"\n"), OPENED.rstrip(b"\n"), OPENED.rstrip(b"\n")]


def test_the_last_chunk_ends_the_stream() -> None:
    frames = LogFrames()
    frames.feed(HEAD + chunk(OPENED))
    assert frames.feed(b"0\r\n\r\n") == [] and frames.ended


def test_a_tty_containers_output_has_no_frames() -> None:
    frames = LogFrames(tty=True)
    assert frames.feed(HEAD + f"{len(OPENED):x}\r\n".encode() + OPENED + b"\r\n") == [
        OPENED.rstrip(b"\n")
    ]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}", "404"),
        (HEAD + b"zz\r\n", "chunk size"),
        (HEAD + b"9\r\n\x07\x00\x00\x00\x00\x00\x00\x01a\r\n", "frame header"),
        (HEAD + b"5\r\nabcde!!", "CRLF"),
    ],
)
def test_an_answer_not_of_podmans_shape_is_an_error(answer: bytes, said: str) -> None:
    with pytest.raises(StreamError, match=said):
        LogFrames().feed(answer)


def test_flow_records_and_inbound_probes_are_no_news() -> None:
    assert is_news(OPENED.rstrip(b"\n"))
    assert not is_news(PROBED.rstrip(b"\n"))
    assert not is_news(b"2026-12-04 23:44:01.1 +0000 FLOW_LOG (info) LOG [1:2] BEGIN")
    assert not is_news(b"")


@pytest.fixture
def followed() -> Iterator[tuple[ApiContainers, socket.socket]]:
    ours, podmans = socket.socketpair()
    ours.setblocking(False)
    routers = ApiContainers(podman_api.PodmanApi(Path("/nonexistent")))
    routers.followed["default-skupper-router"] = _Followed("c0ffee", ours, LogFrames())
    yield routers, podmans
    podmans.close()
    ours.close()


def test_a_followed_routers_news_wakes_the_controller_once(
    followed: tuple[ApiContainers, socket.socket],
) -> None:
    routers, podman = followed
    fd = routers.followed["default-skupper-router"].sock.fileno()
    podman.sendall(HEAD + chunk(PROBED))
    routers.drain([fd])
    assert not routers.news([])  # an inbound probe changes nothing reported
    podman.sendall(chunk(OPENED))
    routers.drain([fd])
    assert routers.news([]) and not routers.news([])


def test_a_stream_podman_ends_is_news_and_is_dropped(
    followed: tuple[ApiContainers, socket.socket],
) -> None:
    routers, podman = followed
    fd = routers.followed["default-skupper-router"].sock.fileno()
    podman.sendall(HEAD + chunk(PROBED) + b"0\r\n\r\n")
    routers.drain([fd])
    assert routers.news([]) and routers.followed == {}
