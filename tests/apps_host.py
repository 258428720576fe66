"""A minimal MCP Apps host, as a web page: the app in a sandboxed iframe, spoken to as a
host would (tests/apps_protocol.py names the methods and cites the spec).

``host_page(app_html, tool_result, refresh_result)`` is an HTML document. Loaded in a
browser it puts the app in ``<iframe sandbox="allow-scripts" srcdoc=...>``, answers its
``ui/initialize``, waits for ``ui/notifications/initialized``, then sends
``ui/notifications/tool-input`` and ``ui/notifications/tool-result`` (the first recorded
status); a ``tools/call`` for the app-only ``view_refresh`` is answered with the refresh
result, ``ui/request-display-mode`` with the mode asked for when the context offers it. Every
message the app sent is in ``window.__appMessages``; what the host sent in
``window.__hostSent``; ``window.__hostContextChanged(params)`` sends
``ui/notifications/host-context-changed``.

The page is served at ``HOST_URL`` (``Page.serve``): a real origin, the one the view posts to.
"""

from __future__ import annotations

import json
from typing import Any

import apps_protocol as P

#: Where the test hosts are served from (answered by the page itself, never fetched).
HOST_URL = "http://127.0.0.1:9/apps-host.html"

HOST_INFO = {"name": "skupper-mcp-test-host", "version": "0.1.0"}
HOST_CAPABILITIES: dict[str, dict[str, Any]] = {"serverTools": {}, "logging": {}}
HOST_CONTEXT = {
    "theme": "light",
    "displayMode": "inline",
    "availableDisplayModes": ["inline"],
    "containerDimensions": {"maxHeight": 2000},
    "locale": "en-US",
    "timeZone": "UTC",
    "platform": "web",
    "deviceCapabilities": {"touch": False, "hover": True},
}


def call_tool_result(structured: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    """A CallToolResult as an MCP server answers a tool with an outputSchema."""
    return {
        "content": [{"type": "text", "text": json.dumps(structured)}],
        "structuredContent": structured,
        "isError": is_error,
    }


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element: no '<' at all (no </script>, no <!--)."""
    return (
        json.dumps(value)
        .replace("<", "\\u003c")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def host_page(
    app_html: str,
    tool_result: dict[str, Any],
    refresh_result: dict[str, Any] | None = None,
    tool_arguments: dict[str, Any] | None = None,
    host_capabilities: dict[str, Any] | None = None,
    host_context: dict[str, Any] | None = None,
) -> str:
    config = {
        "app": app_html,
        "methods": {
            "initialize": P.INITIALIZE,
            "initialized": P.INITIALIZED,
            "toolInput": P.TOOL_INPUT,
            "toolResult": P.TOOL_RESULT,
            "toolsCall": P.TOOLS_CALL,
        },
        "initializeResult": {
            "protocolVersion": P.PROTOCOL_VERSION,
            "hostInfo": HOST_INFO,
            "hostCapabilities": HOST_CAPABILITIES
            if host_capabilities is None
            else host_capabilities,
            "hostContext": HOST_CONTEXT | (host_context or {}),
        },
        "toolArguments": tool_arguments or {},
        "toolResult": tool_result,
        "tools": {P.REFRESH_TOOL: refresh_result or tool_result},
    }
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps test host</title>
<link rel="icon" href="data:,">
<style>body{{margin:0}} iframe{{border:0;width:100%;height:100vh;display:block}}</style>
</head><body>
<iframe id="app" sandbox="allow-scripts" title="app"></iframe>
<script>
"use strict";
const CONFIG = {_script_json(config)};
const M = CONFIG.methods;
window.__appMessages = [];
window.__hostSent = [];
window.__hostErrors = [];
const frame = document.getElementById("app");
function send(message) {{
  window.__hostSent.push(message);
  frame.contentWindow.postMessage(message, "*");
}}
function answer(id, result) {{ send({{jsonrpc: "2.0", id, result}}); }}
function refuse(id, code, message) {{ send({{jsonrpc: "2.0", id, error: {{code, message}}}}); }}
window.addEventListener("message", (event) => {{
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  window.__appMessages.push(m);
  if (!m || m.jsonrpc !== "2.0") {{ window.__hostErrors.push("not JSON-RPC 2.0"); return; }}
  const request = m.method !== undefined && m.id !== undefined;
  if (m.method === M.initialize && request) {{
    answer(m.id, CONFIG.initializeResult);
  }} else if (m.method === M.initialized) {{
    send({{jsonrpc: "2.0", method: M.toolInput, params: {{arguments: CONFIG.toolArguments}}}});
    send({{jsonrpc: "2.0", method: M.toolResult, params: CONFIG.toolResult}});
  }} else if (m.method === M.toolsCall && request) {{
    const name = m.params && m.params.name;
    if (name in CONFIG.tools) answer(m.id, CONFIG.tools[name]);
    else refuse(m.id, -32602, "unknown tool " + name);
  }} else if (m.method === "ui/request-display-mode" && request) {{
    const context = CONFIG.initializeResult.hostContext;
    const mode = (context.availableDisplayModes || []).includes(m.params.mode)
      ? m.params.mode : context.displayMode;
    context.displayMode = mode;
    answer(m.id, {{mode}});
  }} else if (m.method === "ping" && request) {{
    answer(m.id, {{}});
  }} else if (request) {{
    refuse(m.id, -32601, "method not found: " + m.method);
  }}
}});
window.__hostContextChanged = (params) => send(
  {{jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params}});
frame.srcdoc = CONFIG.app;
</script>
</body></html>
"""
