"""The management listener (role ``normal``): one JSON line in, one JSON line out.

``{"op": "query"}`` gets the router's state; ``{"op": "delete", "type": "tcpConnector",
"name": N}`` deletes one tcpConnector, as skmanage's DELETE does of skrouterd's
(``tcpConnector``'s operations are CREATE and DELETE, ``skrouter.json@3.5.1``)."""

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
    delete: Callable[[str, str], dict[str, Any]] | None = None,
) -> None:
    """Answer one request: a query, a delete (where ``delete`` is given), else an error."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout=5)
        reply = respond(line[:MAX_REQUEST], answer, delete)
        writer.write((json.dumps(reply) + "\n").encode())
        await writer.drain()
    except (OSError, TimeoutError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def respond(
    line: bytes,
    answer: Callable[[], dict[str, Any]],
    delete: Callable[[str, str], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The reply to one request line."""
    try:
        request = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return {"error": 'expected one JSON object per line, such as {"op": "query"}'}
    if not isinstance(request, dict):
        return {"error": "expected one JSON object"}
    if request.get("op") == "query":
        return answer()
    if request.get("op") == "delete" and delete is not None:
        return delete(str(request.get("type", "")), str(request.get("name", "")))
    return {"error": 'unknown operation; they are {"op": "query"} and {"op": "delete", ...}'}
