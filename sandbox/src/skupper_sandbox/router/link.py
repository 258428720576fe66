"""One live link between two routers: its peer's identity and a frame writer."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass

from skupper_sandbox.router.protocol import Frame


@dataclass(frozen=True)
class PeerHello:
    """What a router says about itself when a link opens."""

    router_id: str
    site: str
    site_id: str


class LinkSession:
    """A link whose hello exchange is done. ``name`` is the routing table's peer name."""

    def __init__(
        self,
        name: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        peer: PeerHello,
        cost: int,
        dialled: bool,
    ) -> None:
        self.name = name
        self.reader = reader
        self.writer = writer
        self.peer = peer
        self.cost = cost
        self.last_heard = time.monotonic()
        #: when the link came up: the peer's first router advertisement (router.release)
        self.up_at = self.last_heard
        self.idle_expired = False
        self._stream_ids = itertools.count(1 if dialled else 2, 2)

    def new_stream_id(self) -> int:
        return next(self._stream_ids)

    async def send(self, frame: Frame) -> None:
        """Write a frame and wait while the link's buffer is full (backpressure)."""
        if self.writer.is_closing():
            raise ConnectionResetError(f"link {self.name} is closed")
        self.writer.write(frame.encode())
        await self.writer.drain()

    def send_nowait(self, frame: Frame) -> None:
        """Write a small link-level frame without waiting, so a stalled link (its buffer
        full) cannot stall the router's periodic work, such as noticing that it is idle."""
        if self.writer.is_closing():
            raise ConnectionResetError(f"link {self.name} is closed")
        self.writer.write(frame.encode())

    def abort(self) -> None:
        """Drop the connection now; the reader loop then ends the link."""
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()
