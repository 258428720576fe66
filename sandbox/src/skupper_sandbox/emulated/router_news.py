"""What in a router's output is news to the system-controller, read where the controller
can read it.

On an emulated host the controller reads the router container's log file (``RouterLogs``).
On a real-podman host it cannot: podman keeps that file in the container's ``userdata``,
0700 and owned by the container's root, which a controller running ``--userns keep-id`` as
the host's user is not. There it follows the log through the podman API socket it was
given (``GET /containers/{id}/logs?follow=1&tail=0``), whose answer ``LogFrames`` reads:
chunked HTTP carrying Docker's stream frames, an 8-byte header (stream 1 or 2, three zero
bytes, the size big-endian) before each line, none when the container has a tty
(``pkg/api/handlers/compat/containers_logs.go@v4.3.1:108-171``, the same at v5.8.2).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

#: More new log than this since the last look is news without reading it.
MAX_LOG_NEWS = 1 << 20
#: Router log lines that change nothing the controller reports: flow records (one for every
#: connection through the router) and the server's lines on inbound connections (a TCP
#: probe of a link port, as status makes, is accepted and fails without AMQP; an inbound
#: link that opens is logged again by ROUTER_CORE). Outbound failures stay news: they are
#: a link's error.
NO_NEWS = (b" FLOW_LOG ", b"] Accepted connection to ", b"] Connection from ")
#: An HTTP head longer than this is not podman's.
MAX_HEAD = 64 << 10
#: A frame longer than this is not one of podman's log lines.
MAX_FRAME = 1 << 20


def is_news(line: bytes) -> bool:
    """Whether a complete log line says something the controller reports may have changed."""
    return bool(line.strip()) and not any(mark in line for mark in NO_NEWS)


class RouterLogs:
    """Whether the routers' log files have news: a line since the last look that says
    something the controller reports may have changed (connections opened and lost,
    topology computed, listeners bound, links failing), not one of NO_NEWS."""

    def __init__(self) -> None:
        self.read_to: dict[Path, int] = {}

    def news(self, logs: Iterable[Path]) -> bool:
        return any([self.news_in(log) for log in logs])  # every offset moves on

    def news_in(self, path: Path) -> bool:
        try:
            with path.open("rb") as log:
                size = os.fstat(log.fileno()).st_size
                start = self.read_to.get(path)
                if start is None or size < start or size - start > MAX_LOG_NEWS:
                    self.read_to[path] = size  # a new log, or too much to look at: news
                    return start is not None
                log.seek(start)
                chunk = log.read(size - start)
        except OSError:
            return self.read_to.pop(path, None) is not None
        complete = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written waits
        self.read_to[path] = start + len(complete)
        return any(is_news(line) for line in complete.split(b"\n"))


class StreamError(ValueError):
    """The answer is not podman's log stream."""


class LogFrames:
    """Reads a followed log's HTTP answer as it arrives: ``feed`` takes bytes in any cut and
    gives the complete lines they finish. ``ended`` once the answer is over (podman ends it
    when the container stops). Anything not of podman's shape raises ``StreamError``."""

    def __init__(self, *, tty: bool = False) -> None:
        self.framed = not tty
        self.ended = False
        self._head: bytes | None = b""
        self._chunked = False
        self._raw = b""  # body bytes not yet taken apart (chunk sizes, frame headers)
        self._chunk_left = 0
        self._chunk_end = False  # the CRLF after a chunk's data is due
        self._frames = b""
        self._line = b""

    def feed(self, data: bytes) -> list[bytes]:
        if self._head is not None:
            self._head += data
            end = self._head.find(b"\r\n\r\n")
            if end < 0:
                if len(self._head) > MAX_HEAD:
                    raise StreamError(f"no end of the HTTP head within {MAX_HEAD} bytes")
                return []
            head, data = self._head[:end], self._head[end + 4 :]
            self._head = None
            self._read_head(head)
        self._raw += data
        body = self._dechunk() if self._chunked else self._take_raw()
        return self._lines(self._unframe(body) if self.framed else body)

    def _read_head(self, head: bytes) -> None:
        status, *fields = head.split(b"\r\n")
        parts = status.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or parts[1] != b"200":
            raise StreamError(f"answered {status[:80].decode(errors='replace')!r}")
        for field in fields:
            name, _, value = field.partition(b":")
            if name.strip().lower() == b"transfer-encoding":
                self._chunked = value.strip().lower() == b"chunked"

    def _take_raw(self) -> bytes:
        taken, self._raw = self._raw, b""
        return taken

    def _dechunk(self) -> bytes:
        out = b""
        while self._raw and not self.ended:
            if self._chunk_end:
                if len(self._raw) < 2:
                    break
                if self._raw[:2] != b"\r\n":
                    raise StreamError("a chunk does not end with CRLF")
                self._raw, self._chunk_end = self._raw[2:], False
            elif self._chunk_left:
                piece = self._raw[: self._chunk_left]
                out += piece
                self._raw = self._raw[len(piece) :]
                self._chunk_left -= len(piece)
                self._chunk_end = self._chunk_left == 0
            else:
                end = self._raw.find(b"\r\n")
                if end < 0:
                    if len(self._raw) > 32:
                        raise StreamError("a chunk size line over 32 bytes")
                    break
                size_text = self._raw[:end].split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise StreamError(f"a chunk size {size_text[:20]!r}") from None
                self._raw = self._raw[end + 2 :]
                if size == 0:
                    self.ended = True
                elif size > MAX_FRAME + 8:
                    raise StreamError(f"a chunk of {size} bytes")
                self._chunk_left = size
        return out

    def _unframe(self, data: bytes) -> bytes:
        self._frames += data
        out = b""
        while len(self._frames) >= 8:
            header = self._frames[:8]
            if header[0] not in (0, 1, 2) or header[1:4] != b"\0\0\0":
                raise StreamError(f"a frame header {header.hex()}")
            size = int.from_bytes(header[4:8], "big")
            if size > MAX_FRAME:
                raise StreamError(f"a frame of {size} bytes")
            if len(self._frames) < 8 + size:
                break
            out += self._frames[8 : 8 + size]
            self._frames = self._frames[8 + size :]
        return out

    def _lines(self, data: bytes) -> list[bytes]:
        self._line += data
        *complete, self._line = self._line.split(b"\n")
        if len(self._line) > MAX_FRAME:  # a line that never ends is cut, and read as one
            complete.append(self._line)
            self._line = b""
        return complete
