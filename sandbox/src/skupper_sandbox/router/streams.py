"""The two things a stream on a link can end in: a TCP socket, or another link (a relay).

Flow control is end to end: a sender may have at most ``WINDOW`` bytes unacknowledged; the
receiving end grants more with CREDIT frames once it has written data to its socket.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Protocol

from skupper_sandbox.router.link import LinkSession
from skupper_sandbox.router.protocol import Frame, FrameType, credit_amount, credit_frame

WINDOW = 256 * 1024
CHUNK = 64 * 1024

StreamKey = tuple[LinkSession, int]


class StreamHandler(Protocol):
    async def handle(self, link: LinkSession, frame: Frame) -> None: ...

    def link_lost(self, link: LinkSession) -> None: ...


class TcpBridge:
    """Carries one TCP connection over one stream of a link, both ways, with half-close."""

    def __init__(
        self, link: LinkSession, stream_id: int, forget: Callable[[StreamKey], None]
    ) -> None:
        self.link = link
        self.stream_id = stream_id
        self._forget = forget
        self._credit = WINDOW
        self._credit_ready = asyncio.Event()
        self._credit_ready.set()
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._writer: asyncio.StreamWriter | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._finished = False

    @property
    def key(self) -> StreamKey:
        return (self.link, self.stream_id)

    def attach(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Start pumping once the TCP side is connected (data that came earlier is queued)."""
        if self._finished:
            writer.close()
            return
        self._writer = writer
        self._tasks = [
            asyncio.create_task(self._outbound(reader)),
            asyncio.create_task(self._inbound(writer)),
        ]
        for task in self._tasks:
            task.add_done_callback(self._task_done)

    async def handle(self, link: LinkSession, frame: Frame) -> None:
        if frame.type is FrameType.DATA:
            self._inbox.put_nowait(frame.payload)
        elif frame.type is FrameType.END:
            self._inbox.put_nowait(None)
        elif frame.type is FrameType.CREDIT:
            self._credit += credit_amount(frame)
            self._credit_ready.set()
        elif frame.type is FrameType.CLOSE:
            self.abort(notify_peer=False)

    def link_lost(self, link: LinkSession) -> None:
        self.abort(notify_peer=False)

    def abort(self, *, notify_peer: bool, reason: str = "") -> None:
        """End the stream at once: reset the socket and, if asked, tell the other end."""
        if self._finished:
            return
        self._finished = True
        self._forget(self.key)
        for task in self._tasks:
            task.cancel()
        if self._writer is not None:
            self._writer.transport.abort()
        if notify_peer:
            frame = Frame(FrameType.CLOSE, self.stream_id, reason.encode())
            with contextlib.suppress(Exception):
                self.link.writer.write(frame.encode())

    async def _outbound(self, reader: asyncio.StreamReader) -> None:
        while True:
            await self._credit_ready.wait()
            data = await reader.read(min(CHUNK, self._credit))
            if not data:
                await self.link.send(Frame(FrameType.END, self.stream_id))
                return
            self._credit -= len(data)
            if self._credit <= 0:
                self._credit_ready.clear()
            await self.link.send(Frame(FrameType.DATA, self.stream_id, data))

    async def _inbound(self, writer: asyncio.StreamWriter) -> None:
        while True:
            data = await self._inbox.get()
            if data is None:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()
            await self.link.send(credit_frame(self.stream_id, len(data)))

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or self._finished:
            return
        if task.exception() is not None:
            self.abort(notify_peer=True, reason=str(task.exception()))
        elif all(t.done() for t in self._tasks):
            self._finished = True
            self._forget(self.key)
            if self._writer is not None:
                self._writer.close()


class Relay:
    """Joins a stream on one link to a stream on another: the router is a hop in between."""

    def __init__(
        self,
        a: StreamKey,
        b: StreamKey,
        forget: Callable[[StreamKey], None],
    ) -> None:
        self._ends = (a, b)
        self._forget = forget
        self._ended: set[int] = set()

    def _other(self, link: LinkSession) -> tuple[int, StreamKey]:
        return (1, self._ends[1]) if link is self._ends[0][0] else (0, self._ends[0])

    async def handle(self, link: LinkSession, frame: Frame) -> None:
        index, (out_link, out_id) = self._other(link)
        if frame.type is FrameType.CLOSE:
            self._finish()
        elif frame.type is FrameType.END:
            self._ended.add(index)
            if len(self._ended) == 2:
                self._finish()
        try:
            await out_link.send(Frame(frame.type, out_id, frame.payload))
        except OSError:
            # The next hop's link is gone: end this stream, not the link it came in on.
            self._finish()
            back_id = self._ends[1 - index][1]
            with contextlib.suppress(Exception):
                link.writer.write(Frame(FrameType.CLOSE, back_id, b"link lost").encode())

    def link_lost(self, link: LinkSession) -> None:
        self._finish()
        _, (out_link, out_id) = self._other(link)
        with contextlib.suppress(Exception):
            out_link.writer.write(Frame(FrameType.CLOSE, out_id, b"link lost").encode())

    def _finish(self) -> None:
        for end in self._ends:
            self._forget(end)


async def pipe(
    a: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    b: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    """Copy two TCP connections into each other (a listener whose connector is local)."""

    async def copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    try:
        await asyncio.gather(copy(a[0], b[1]), copy(b[0], a[1]))
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        a[1].close()
        b[1].close()
