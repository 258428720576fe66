"""Ask a router for its live state over its management listener (one JSON line each way)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any


async def query_router(host: str, port: int, timeout: float = 1.0) -> dict[str, Any] | None:
    """The router's answer to ``{"op": "query"}``, or None when it does not answer."""
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(b'{"op": "query"}\n')
            await writer.drain()
            line = await reader.readline()
        answer = json.loads(line)
        return answer if isinstance(answer, dict) else None
    except (OSError, TimeoutError, ValueError):
        return None
    finally:
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
