"""The sandbox's client of a real-podman host's API socket reads podman's answers as data:
a container is one podman names, in the shape podman gives it, or an error; never a guess.
Served here by a stand-in on a Unix socket of the test's own."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skupper_sandbox import hostenv
from skupper_sandbox.emulated import podman_api

ID = "4838c9afcbe02aff2ddced45cafab79bc0c83d81057d3ed5c8df033bcf902073"
INSPECT = {
    "Id": ID,
    "State": {"Running": True, "Pid": 42},
    "RestartCount": 1,
    "Config": {"Tty": False},
}
VERSION = {
    "Version": "4.3.1",
    "Components": [{"Name": "Podman Engine", "Details": {"APIVersion": "4.3.1"}}],
}


def _answer(status: int, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
    return (head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, dict[str, bytes]]]:
    """A socket answering each path with the bytes in the returned table (404 otherwise)."""
    path = tmp_path / "podman.sock"
    table: dict[str, bytes] = {}
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(8)
    listener.settimeout(0.1)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                request = conn.recv(65536).decode()
                target = request.split(" ", 2)[1] if " " in request else ""
                conn.sendall(table.get(target, _answer(404, b'{"cause":"no such container"}')))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, table
    done.set()
    thread.join(5)
    listener.close()


def test_a_container_is_read_from_its_inspect_and_404_is_none(
    served: tuple[Path, dict[str, bytes]],
) -> None:
    path, table = served
    table["/containers/ns-skupper-router/json"] = _answer(200, json.dumps(INSPECT).encode())
    table["/version"] = _answer(200, json.dumps(VERSION).encode())
    api = podman_api.PodmanApi(path, timeout=5)
    assert api.inspect("ns-skupper-router") == podman_api.ContainerState(ID, True, 42, 1, False)
    assert api.inspect("nosuch") is None
    assert api.validate() == "4.3.1"


@pytest.mark.parametrize(
    "answer",
    [
        _answer(200, b"not json"),
        _answer(200, json.dumps({**INSPECT, "State": {"Running": "yes", "Pid": 1}}).encode()),
        _answer(200, json.dumps({"State": {"Pid": 1}}).encode()),
        _answer(500, b'{"cause":"boom"}'),
        _answer(200, b"[" + b" " * podman_api.MAX_BODY + b"]"),
    ],
)
def test_an_answer_not_in_podmans_shape_is_an_error(
    served: tuple[Path, dict[str, bytes]], answer: bytes
) -> None:
    path, table = served
    table["/containers/c/json"] = answer
    with pytest.raises(podman_api.PodmanApiError):
        podman_api.PodmanApi(path, timeout=5).inspect("c")


def test_an_engine_that_is_not_podman_4_fails_validation(
    served: tuple[Path, dict[str, bytes]],
) -> None:
    path, table = served
    old = {
        "Version": "3.4",
        "Components": [{"Name": "Podman Engine", "Details": {"APIVersion": "3.4.4"}}],
    }
    table["/version"] = _answer(200, json.dumps(old).encode())
    with pytest.raises(podman_api.PodmanApiError, match=r"4\.0\.0 or greater"):
        podman_api.PodmanApi(path, timeout=5).validate()
    table["/version"] = _answer(200, json.dumps({"Version": "24", "Components": []}).encode())
    with pytest.raises(podman_api.PodmanApiError, match="not podman"):
        podman_api.PodmanApi(path, timeout=5).validate()


def test_nothing_listening_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(podman_api.PodmanApiError):
        podman_api.PodmanApi(tmp_path / "none.sock", timeout=1).inspect("c")


def test_the_socket_is_the_hosts_own_or_the_endpoint_it_was_given(tmp_path: Path) -> None:
    def host(uid: int) -> hostenv.HostInfo:
        return hostenv.HostInfo(
            "h",
            "127.0.0.2",
            "u",
            uid,
            "provider",
            "2.1.3",
            True,
            "id",
            str(tmp_path),
            str(tmp_path),
        )

    root, user = host(0), host(1000)
    assert podman_api.socket_path(root) == tmp_path / "sysroot/run/podman/podman.sock"
    assert podman_api.socket_path(user) == tmp_path / "run/podman/podman.sock"
    given = {"CONTAINER_ENDPOINT": "unix:///run/podman/podman.sock"}
    assert podman_api.endpoint_socket(given, root) == podman_api.socket_path(root)
    given = {"CONTAINER_ENDPOINT": "unix:///run/user/1000/podman/podman.sock"}
    assert podman_api.endpoint_socket(given, user) == podman_api.socket_path(user)
    assert podman_api.endpoint_socket({}, user) == podman_api.socket_path(user)
    # a TCP endpoint is none of the sandbox's: the host's own socket
    given = {"CONTAINER_ENDPOINT": "tcp://10.0.0.1:2375"}
    assert podman_api.endpoint_socket(given, user) == podman_api.socket_path(user)
    # 2.2.x's endpoint is the container's mount (install.go@2.2.1:221-226): outside the
    # container it is the host's own socket, never this machine's /var/run/podman.sock
    given = {"CONTAINER_ENDPOINT": "unix:///var/run/podman.sock"}
    assert podman_api.endpoint_socket(given, user) == podman_api.socket_path(user)
