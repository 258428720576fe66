"""The MCP Apps protocol as the VAN view speaks it: method names and constants.

MCP Apps is the MCP extension ``io.modelcontextprotocol/ui`` (SEP-1865; package
``@modelcontextprotocol/ext-apps``), specification
``specification/2026-01-26/apps.mdx`` of github.com/modelcontextprotocol/ext-apps. A view
(the app, in a sandboxed iframe) and its host exchange JSON-RPC 2.0 messages over
``postMessage``. The page (src/skupper_mcp/view) mirrors these names; tests/apps_host.py
plays the host.

Lifecycle (spec "Lifecycle", "UI Initialization"): the view sends the ``ui/initialize``
request; the host answers with protocolVersion, hostInfo, hostCapabilities, hostContext;
the view sends ``ui/notifications/initialized``; only then does the host send
``ui/notifications/tool-input`` (the tool's arguments, once) and
``ui/notifications/tool-result`` (params: the CallToolResult, with ``structuredContent``).
To refresh, the view sends a standard MCP ``tools/call`` request; the host answers with a
CallToolResult.
"""

from __future__ import annotations

EXTENSION_ID = "io.modelcontextprotocol/ui"
PROTOCOL_VERSION = "2026-01-26"
MIME_TYPE = "text/html;profile=mcp-app"
RESOURCE_URI = "ui://skupper/van.html"

# View -> host
INITIALIZE = "ui/initialize"  # request: {protocolVersion, appInfo, appCapabilities}
INITIALIZED = "ui/notifications/initialized"  # notification, after the initialize answer
TOOLS_CALL = "tools/call"  # request: {name, arguments} -> CallToolResult
SIZE_CHANGED = "ui/notifications/size-changed"  # notification: {width, height}
LOG = "notifications/message"  # notification: MCP logging

# Host -> view
TOOL_INPUT = "ui/notifications/tool-input"  # notification: {arguments}
TOOL_RESULT = "ui/notifications/tool-result"  # notification: params = CallToolResult
TOOL_CANCELLED = "ui/notifications/tool-cancelled"  # notification: {reason}
HOST_CONTEXT_CHANGED = "ui/notifications/host-context-changed"  # notification
RESOURCE_TEARDOWN = "ui/resource-teardown"  # request: {reason}

#: The tool the view's Refresh button calls.
STATUS_TOOL = "status"

#: The app-only tool the view's Refresh calls (``_meta.ui.visibility: ["app"]``).
REFRESH_TOOL = "view_refresh"


def apps_client_extension():
    """What an MCP Apps host declares in its client capabilities (spec "Client<>Server
    Capability Negotiation"): the extension, with the app MIME type it renders."""
    from mcp.client.extension import advertise

    return advertise(EXTENSION_ID, {"mimeTypes": [MIME_TYPE]})
