"""The management listener (role ``normal``): one JSON line in, one JSON line out."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

MAX_REQUEST = 64 * 1024


async def serve_query(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    answer: Callable[[], dict[str, Any]],
) -> None:
    """Answer one request: ``{"op": "query"}`` gets the router's state, anything else an error."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout=5)
        writer.write((json.dumps(respond(line[:MAX_REQUEST], answer)) + "\n").encode())
        await writer.drain()
    except (OSError, TimeoutError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def respond(line: bytes, answer: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The reply to one request line."""
    try:
        request = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return {"error": 'expected one JSON object per line, such as {"op": "query"}'}
    if not isinstance(request, dict) or request.get("op") != "query":
        return {"error": 'unknown operation; the only one is {"op": "query"}'}
    return answer()
