"""A host page on the official ``AppBridge`` of @modelcontextprotocol/ext-apps, the version
view/package-lock.json pins: view/test/appbridge-host.js, bundled here with view/'s esbuild.

It needs view/'s packages (``make view-packages``: ``npm ci`` in view/, what CI does first);
without them the tests that use it skip, and fail under CI. The page records what the view did
on ``window``: ``__appMessages`` (every message from the view), ``__toolCalls`` (the server
tools it called), ``__displayModes`` (the modes it asked for), ``__initialized``;
``__setHostContext(context)`` changes the host context (the bridge sends
``ui/notifications/host-context-changed``).
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from apps_host import HOST_CAPABILITIES, HOST_CONTEXT, HOST_INFO, _script_json

VIEW = Path(__file__).resolve().parents[1] / "view"
ESBUILD = VIEW / "node_modules" / ".bin" / "esbuild"
SOURCE = VIEW / "test" / "appbridge-host.js"
BUILD_TIMEOUT = 120.0


def require_appbridge() -> None:
    if ESBUILD.exists():
        return
    reason = "view/'s packages are not installed (make view-packages: npm ci in view/)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the AppBridge tests: {reason}", pytrace=False)
    pytest.skip(reason)


@cache
def bridge_script() -> str:
    """The host's script with the AppBridge and its dependencies, one classic script."""
    done = subprocess.run(
        [str(ESBUILD), str(SOURCE), "--bundle", "--minify", "--format=iife", "--platform=browser"],
        cwd=VIEW,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"esbuild failed: {done.stderr[-2000:]}"
    return done.stdout.replace("</script", "<\\/script")


def bridge_page(
    app_html: str,
    tool_result: dict[str, Any],
    tools: dict[str, dict[str, Any]] | None = None,
    *,
    host_capabilities: dict[str, Any] | None = None,
    host_context: dict[str, Any] | None = None,
    tool_arguments: dict[str, Any] | None = None,
) -> str:
    config = {
        "app": app_html,
        "hostInfo": HOST_INFO,
        "hostCapabilities": HOST_CAPABILITIES if host_capabilities is None else host_capabilities,
        "hostContext": HOST_CONTEXT | (host_context or {}),
        "toolArguments": tool_arguments or {},
        "toolResult": tool_result,
        "tools": tools or {},
    }
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>AppBridge test host</title>
<link rel="icon" href="data:,">
<style>body{{margin:0}} iframe{{border:0;width:100%;height:100vh;display:block}}</style>
</head><body>
<iframe id="app" sandbox="allow-scripts" title="app"></iframe>
<script type="application/json" id="host-config">{_script_json(config)}</script>
<script>{bridge_script()}</script>
</body></html>
"""
