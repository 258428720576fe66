"""A test's socket server served from a thread of its own for as long as a block runs:
one copy of the start, the stop and the join that every in-process server needs."""

from __future__ import annotations

import contextlib
import socketserver
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def in_thread(server: socketserver.BaseServer) -> Iterator[None]:
    """``server`` answering from a daemon thread until the block ends; then shut down,
    its socket closed and its thread joined."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
