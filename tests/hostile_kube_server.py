"""A Kubernetes API server gone bad, over HTTPS with the sandbox's credentials: every request
is answered in one of the hostile ways of issue 31, so a test can show the connector keeps
to its bounds.

- ``trickle``: a 200 whose JSON body comes one byte at a time, a byte every ``pause``
  seconds (each read is quick, so urllib3's per-read timeout never trips);
- ``trickle-head``: the status line and headers themselves come a byte at a time;
- ``endless``: a chunked 200 list that never ends (pods, as fast as the socket takes them);
- ``long-error``: a 500 whose Status message is megabytes long;
- ``deep``: a 200 of 2 KB of JSON nested a thousand levels (``[[[[...]]]]``), issue 43;
- ``gzip``: a 200 of 64 KiB of gzip that unpacks to 64 MiB, whatever was asked, issue 43.

It runs in threads of its own; ``stop`` ends every connection.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from skupper_sandbox.kube.kubeconfig import ApiCredentials, ensure_credentials
from sshkit import free_port

MODES = ("trickle", "trickle-head", "endless", "long-error", "deep", "gzip")
#: A thousand levels of JSON in 2 KB: ``json.loads`` raises ``RecursionError`` on it.
DEEP = b"[" * 1000 + b"]" * 1000
POD = json.dumps({"metadata": {"name": "skupper-router-x" * 8}, "status": {"phase": "Running"}})


class HostileKubeApi:
    def __init__(self, credentials: ApiCredentials, address: str, port: int, mode: str) -> None:
        assert mode in MODES
        self.mode = mode
        self.pause = 0.2
        self.requests = 0
        self._stop = threading.Event()
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(credentials.server_cert, credentials.server_key)
        self._listener = socket.create_server((address, port))
        self._listener.settimeout(0.2)
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def stop(self) -> None:
        self._stop.set()
        self._accepting.join(5)
        self._listener.close()
        for thread in self._threads:
            thread.join(5)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                raw, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(raw,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, raw: socket.socket) -> None:
        raw.settimeout(5)
        with contextlib.suppress(OSError), raw:
            conn = self._context.wrap_socket(raw, server_side=True)
            with conn:
                self._read_request(conn)
                self.requests += 1
                getattr(self, "_" + self.mode.replace("-", "_"))(conn)

    @staticmethod
    def _read_request(conn: ssl.SSLSocket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                raise ConnectionError("closed before the request ended")
            data += chunk
        # bodies (create, replace) are not read: every answer is the same bad one

    def _drip(self, conn: ssl.SSLSocket, data: bytes) -> None:
        for offset in range(len(data)):
            if self._stop.wait(self.pause):
                return
            conn.sendall(data[offset : offset + 1])

    def _trickle(self, conn: ssl.SSLSocket) -> None:
        body = json.dumps({"kind": "PodList", "items": [json.loads(POD)] * 50}).encode()
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        conn.sendall(head)
        self._drip(conn, body)

    def _trickle_head(self, conn: ssl.SSLSocket) -> None:
        self._drip(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" * 100)

    def _endless(self, conn: ssl.SSLSocket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        item = (POD + ",").encode() * 200
        chunk = f"{len(item):x}\r\n".encode() + item + b"\r\n"
        started = time.monotonic()
        opening = b'{"items": ['
        conn.sendall(f"{len(opening):x}\r\n".encode() + opening + b"\r\n")
        while not self._stop.is_set() and time.monotonic() - started < 60:
            conn.sendall(chunk)

    def _long_error(self, conn: ssl.SSLSocket) -> None:
        status = {"kind": "Status", "status": "Failure", "message": "x" * (2 * 1024 * 1024)}
        body = json.dumps(status).encode()
        conn.sendall(
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    def _deep(self, conn: ssl.SSLSocket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(DEEP)}\r\n\r\n".encode()
            + DEEP
        )

    def _gzip(self, conn: ssl.SSLSocket) -> None:
        from hostile_model_server import gzip_bomb

        body = gzip_bomb(64)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )


def kubeconfig_for(credentials: ApiCredentials, path: Path) -> Path:
    """The sandbox kubeconfig, with the namespace ``van`` as its default."""
    import yaml

    config = yaml.safe_load(credentials.kubeconfig.read_text())
    config["contexts"][0]["context"]["namespace"] = "van"
    path.write_text(yaml.safe_dump(config))
    return path


@contextlib.contextmanager
def hostile_kubeconfig(folder: Path, address: str, mode: str) -> Iterator[Path]:
    """A ``HostileKubeApi`` in ``mode`` on a free port of ``address`` (its credentials under
    folder/api), stopped after: the kubeconfig (folder/kubeconfig) that reaches it."""
    credentials = ensure_credentials(folder / "api", address, port := free_port(address))
    server = HostileKubeApi(credentials, address, port, mode)
    try:
        yield kubeconfig_for(credentials, folder / "kubeconfig")
    finally:
        server.stop()
