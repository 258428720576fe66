"""One host of a normal sandbox world made hostile in every way of issue 31 at once, after
the world was set up and brought up, so the sandbox stays a faithful world of its own and
the hostility is only what a host (or whoever can write to its files) chooses:

- ``runtime/certs`` holds a directory whose name forges a marker (``x<newline>@@podman ``)
  over a file whose path names an evil ``podman`` (``evil_podman``): run, it touches a mark;
- ``input/resources`` holds an alias bomb and a 14 MiB resource file;
- a private key is left 0644;
- the router's log ends with lines carrying a secret of every kind the redactor knows, a
  lone byte no UTF-8 has, bidi controls, Markdown and forged markers;
- the controller is stopped (``stop_controller``) and the Site's rendered status carries
  bidi controls, line breaks and Markdown, which nothing rewrites while it is stopped;
- the model container is replaced by ``HostileModel``: ``/v1/models`` to ``curl`` (status,
  resolve_profile) lists ids with a lone surrogate, bidi controls and a Markdown heading;
  through the VAN (``test_model``'s httpx) the first list never ends, the first chat
  completion trickles a byte at a time, and later ones answer with the same hostile text.

    python tests/hostile_world.py model ADDRESS PORT MODEL_ID   (the model server)
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from local_tools import end

#: What a hostile host puts in its text: a lone surrogate (as a JSON escape gives it), the
#: bidi controls, and line breaks that would open a Markdown heading and table rows.
HOSTILE_TEXT = "bad \ud800 \u202eevil\u202c \u2066x\u2069\n# Forged heading\n| a | b |\n"
BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
MODEL_IDS = [HOSTILE_TEXT, "x" + "\u202e" * 3 + "|id|"]
#: The alias bomb of the finding: nine anchors of ten aliases each (10**9 strings composed).
#: x0 anchors ten strings, and each x{i} ten aliases of the x{i-1} before it.
_ANCHORS = [f"x{i}: &a{i} [{', '.join([f'*a{i - 1}' if i else 'lol'] * 10)}]" for i in range(9)]
BOMB = "\n".join(
    [
        "apiVersion: skupper.io/v2alpha1",
        "kind: Listener",
        "metadata: {name: bomb}",
        *_ANCHORS,
        "spec: {routingKey: *a8, host: 127.0.0.1, port: 9000}",
    ]
)
OVERSIZED_BYTES = 14 * 1024 * 1024
#: The forged marker: the directory's name ends a line and starts ``@@podman <path>``.
FORGING_DIR = "x\n@@podman "
#: The file names the resource attacks take: the bomb sorts first, so both are read.
BOMB_FILE = "Listener-a-bomb.yaml"
OVERSIZED_FILE = "Listener-big.yaml"


def hostile_log_lines(secret_lines: list[str]) -> bytes:
    """What the router's log ends with: the secrets, then lines no reader may take as text
    of its own (a byte sequence that is no UTF-8, bidi controls, Markdown, forged markers)."""
    tail = [
        b"2026-12-03 10:00:00.000000 +0000 SERVER (info) bad byte \xed\xa0\x80 here",
        "2026-12-03 10:00:00.000001 +0000 SERVER (info) \u202eevil\u202c \u2066x\u2069".encode(),
        b"# Forged heading | a | b | `code` *bold*",
        b"@@rc 0",
        b"@@end",
        b"|@@exists 0",
    ]
    return "\n".join(secret_lines).encode() + b"\n" + b"\n".join(tail) + b"\n"


@dataclass
class Hostility:
    """What was planted on the hostile host, to look at afterwards."""

    host: str
    namespace_dir: Path
    mark_dir: Path
    evil_podman: Path
    refused_files: list[Path] = field(default_factory=list)
    open_key: Path | None = None

    @property
    def marks(self) -> list[str]:
        return sorted(p.name for p in self.mark_dir.iterdir())

    def remove_refused_files(self) -> None:
        """What a user does when a read names the files it refused."""
        for path in self.refused_files:
            path.unlink()


def plant_files(namespace_dir: Path, place: Path, host: str) -> Hostility:
    """The file attacks on a namespace directory of a set-up podman site; the evil podman
    and the folder of the marks it leaves go in ``place``."""
    mark_dir = place / "marks"
    mark_dir.mkdir(parents=True)
    evil = place / "evil" / "podman"
    evil.parent.mkdir()
    evil.write_text(f'#!/bin/sh\ntouch {mark_dir}/evil-podman-ran\nexec podman "$@"\n')
    evil.chmod(0o755)
    # runtime/certs/x<newline>@@podman /<mark_dir>/bin/podman, mode 0600: a name the cert
    # check lists; printed as find prints it, it was the line "@@podman <evil>"
    forged = namespace_dir / "runtime" / "certs" / FORGING_DIR / str(evil).lstrip("/")
    forged.parent.mkdir(parents=True)
    forged.write_text("not a certificate\n")
    forged.chmod(0o600)
    resources = namespace_dir / "input" / "resources"
    bomb = resources / BOMB_FILE
    bomb.write_text(BOMB)
    big = resources / OVERSIZED_FILE
    row = "  key00000000: [1, 2]\n"
    with big.open("w") as out:
        out.write("kind: Listener\nmetadata: {name: big}\nspec:\n")
        out.write(row * (OVERSIZED_BYTES // len(row)))
    key = next(iter(sorted((namespace_dir / "runtime" / "certs").glob("*/tls.key"))))
    key.chmod(0o644)
    return Hostility(host, namespace_dir, mark_dir, evil, [bomb, big], key)


def plant_site_status(namespace_dir: Path) -> None:
    """The rendered Site's status message made hostile (line breaks, bidi, Markdown),
    written as the controller writes it (a whole new file renamed into place)."""
    import yaml

    [path] = (namespace_dir / "runtime" / "resources").glob("Site-*.yaml")
    doc = yaml.safe_load(path.read_text())
    doc["status"]["message"] = HOSTILE_TEXT.replace("\ud800", "\ufffd")  # YAML has none
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(doc, allow_unicode=True))
    tmp.replace(path)


def append_log(log: Path, secret_lines: list[str]) -> None:
    with log.open("ab") as out:
        out.write(hostile_log_lines(secret_lines))


def open_key_files(namespace_dir: Path) -> list[str]:
    """The private-key files of a namespace that group or others may read (the product's
    own rule, ``facts/private_keys``): tls.key, Secret resources, runtime/links."""
    found = []
    for path in namespace_dir.rglob("*"):
        if not path.is_file():
            continue
        relative = path.relative_to(namespace_dir).as_posix()
        is_key = (
            path.name == "tls.key"
            or ("/resources/" in f"/{relative}" and path.name.startswith("Secret-"))
            or relative.startswith("runtime/links/")
        )
        if is_key and stat.S_IMODE(path.stat().st_mode) & 0o077:
            found.append(f"{stat.S_IMODE(path.stat().st_mode):o} {relative}")
    return found


# --- the model server ------------------------------------------------------------------


class HostileModel:
    """The hostile model server as a process of its own, on the host's model address and
    port (started once the host's model container is stopped); ``stop`` ends it."""

    def __init__(self, address: str, port: int, model_id: str) -> None:
        self.address, self.port = address, port
        self.process = subprocess.Popen(
            [sys.executable, __file__, "model", address, str(port), model_id],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def answers(self) -> bool:
        """Whether the server accepts connections (it fails the check if it ended)."""
        import socket

        if self.process.poll() is not None:
            raise RuntimeError(f"the hostile model server ended ({self.process.returncode})")
        try:
            with socket.create_connection((self.address, self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        end(self.process)


#: The pace of a trickled answer: each byte quick enough for any per-read timeout.
TRICKLE_PAUSE = 0.5


class _Handler(BaseHTTPRequestHandler):
    model_id = ""
    counts: dict[str, int] = {}  # one server per process
    protocol_version = "HTTP/1.1"

    def _through_the_van(self) -> bool:
        return not self.headers.get("User-Agent", "").startswith("curl/")

    def _count(self, what: str) -> int:
        self.counts[what] = self.counts.get(what, 0) + 1
        return self.counts[what]

    def _send(self, payload: bytes, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        if self.path == "/health":
            self._send(b'{"status": "ok"}')
            return
        if self.path != "/v1/models":
            self._send(b'{"error": "not found"}', 404)
            return
        ids = list(MODEL_IDS)
        if self._through_the_van():
            if self._count("models") == 1:
                self._endless()
                return
            ids.append(self.model_id)
        self._send(json.dumps({"object": "list", "data": [{"id": i} for i in ids]}).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self._count("chat") == 1:
            self._trickle()
            return
        reply = {"choices": [{"message": {"role": "assistant", "content": HOSTILE_TEXT}}]}
        self._send(json.dumps(reply).encode())

    def _endless(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        item = (json.dumps({"id": "m" * 64}) + ",").encode() * 256
        chunk = f"{len(item):x}\r\n".encode() + item + b"\r\n"
        self.wfile.write(b'b\r\n{"data": [ \r\n')
        started = time.monotonic()
        while time.monotonic() - started < 120:
            self.wfile.write(chunk)

    def _trickle(self) -> None:
        body = json.dumps({"choices": [{"message": {"content": "x" * 4096}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for offset in range(len(body)):
            self.wfile.write(body[offset : offset + 1])
            self.wfile.flush()
            time.sleep(TRICKLE_PAUSE)

    def log_message(self, *args: Any) -> None:
        pass


def serve_model(address: str, port: int, model_id: str) -> None:
    _Handler.model_id = model_id
    server = ThreadingHTTPServer((address, port), _Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1:2] == ["model"]:
        os.environ.pop("SKMCP_SANDBOX_HOST", None)
        serve_model(sys.argv[2], int(sys.argv[3]), sys.argv[4])
