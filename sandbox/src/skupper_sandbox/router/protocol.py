"""Link framing: a 9-byte header (type, stream id, payload length) and the payload.

Stream ids are chosen by the side that opens the stream: odd on the dialling side of a
link, even on the accepting side, so the two never collide.
"""

from __future__ import annotations

import asyncio
import enum
import json
import struct
from dataclasses import dataclass
from typing import Any

HEADER = struct.Struct("!BII")
MAX_PAYLOAD = 1 << 20


class FrameType(enum.IntEnum):
    HELLO = 1  # JSON: router id, site, site id, link cost (link-level, stream 0)
    ROUTES = 2  # JSON: {"keys": {key: cost}, "sites": {site: hops}} (link-level, stream 0)
    OPEN = 3  # JSON: {"address": key, "ttl": hops left}: open a stream towards key
    DATA = 4  # bytes of the stream
    END = 5  # the sender will send no more data (TCP half-close)
    CLOSE = 6  # abort the stream in both directions (reason as UTF-8 text)
    CREDIT = 7  # 4-byte unsigned: the receiver consumed that many bytes; send more


class ProtocolError(Exception):
    """The peer sent something that is not a valid frame."""


@dataclass(frozen=True)
class Frame:
    type: FrameType
    stream: int
    payload: bytes = b""

    def encode(self) -> bytes:
        return HEADER.pack(self.type, self.stream, len(self.payload)) + self.payload

    def json(self) -> Any:
        try:
            return json.loads(self.payload)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ProtocolError(f"bad JSON in {self.type.name} frame") from exc


def json_frame(kind: FrameType, body: Any, stream: int = 0) -> Frame:
    return Frame(kind, stream, json.dumps(body, separators=(",", ":")).encode())


def credit_frame(stream: int, amount: int) -> Frame:
    return Frame(FrameType.CREDIT, stream, struct.pack("!I", amount))


def credit_amount(frame: Frame) -> int:
    if len(frame.payload) != 4:
        raise ProtocolError("CREDIT frame must carry 4 bytes")
    (amount,) = struct.unpack("!I", frame.payload)
    return int(amount)


async def read_frame(reader: asyncio.StreamReader) -> Frame | None:
    """The next frame, or None when the peer closed the link cleanly between frames."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError("link closed inside a frame header") from exc
    kind, stream, length = HEADER.unpack(header)
    if length > MAX_PAYLOAD:
        raise ProtocolError(f"frame of {length} bytes is larger than {MAX_PAYLOAD}")
    try:
        frame_type = FrameType(kind)
    except ValueError as exc:
        raise ProtocolError(f"unknown frame type {kind}") from exc
    try:
        payload = await reader.readexactly(length) if length else b""
    except asyncio.IncompleteReadError as exc:
        raise ProtocolError("link closed inside a frame") from exc
    return Frame(frame_type, stream, payload)
