"""The real client tools the exports are for, where they are installed: where to find each
(or a skip that says how to install it) and the LiteLLM proxy run as a user runs it. Shared
by tests/sandbox/test_exports_in_tools.py and tests/sandbox/test_hostile_model_ids.py."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest


def litellm() -> str:
    """The LiteLLM proxy's command: too heavy for a test dependency."""
    found = os.environ.get("SKMCP_LITELLM") or shutil.which("litellm")
    if not found:
        pytest.skip(
            "the LiteLLM proxy is not installed (too heavy for a test dependency): "
            "pip install 'litellm[proxy]' in a venv and set SKMCP_LITELLM to its litellm"
        )
    return found


def npm_tool(variable: str, name: str, package: str) -> str:
    """An npm package's command (opencode, Continue's cn): not test dependencies."""
    found = os.environ.get(variable) or shutil.which(name)
    if not found:
        pytest.skip(
            f"{name} is not installed (an npm package, not a test dependency): "
            f"npm install {package} and set {variable} to its node_modules/.bin/{name}"
        )
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def litellm_proxy(command: list[str], env: dict[str, str], log: Path) -> Iterator[str]:
    """``command`` (``litellm --config ... --port P``) running until its liveliness answers;
    its base URL; stopped (its process group) after."""
    port = command[command.index("--port") + 1]
    with log.open("w") as out:
        proxy = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 240
        while True:
            assert proxy.poll() is None, log.read_text()[-3000:]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health/liveliness", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        yield base
    finally:
        os.killpg(proxy.pid, signal.SIGTERM)
        try:
            proxy.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proxy.pid, signal.SIGKILL)
            proxy.wait(timeout=10)
