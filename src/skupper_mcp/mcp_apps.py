"""The MCP Apps extension (``io.modelcontextprotocol/ui``) of the server, through the SDK's
``mcp.server.apps``: the extension advertised, the VAN view as its ``ui://`` resource (with
``prefersBorder`` and an empty CSP: the view loads nothing), the tools it draws bound to it,
and the view's own app-only tool.

A client that did not declare the extension (with the app MIME type, as the SDK's
``client_supports_apps`` reads it, from ``initialize`` or from each request's envelope) gets
no ``_meta.ui`` on any tool and is not offered the app-only tools: the spec says a server
SHOULD check, and a host that knows nothing of visibility would hand an app-only tool to
its model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.apps import Apps, ResourceCsp, Visibility, client_supports_apps
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import ListToolsResult

from skupper_mcp.view import APP_URI, app_html

__all__ = ["VIEW_REFRESH", "apps_only_for_declared_clients", "van_apps"]

#: The app-only tool the view's Refresh calls (``_meta.ui.visibility: ["app"]``).
VIEW_REFRESH = "view_refresh"

#: What the view may reach besides its own document: nothing (the host's CSP from these
#: lists is then the spec's default: no connection, no resource, no frame).
NO_DOMAINS = ResourceCsp(connect_domains=[], resource_domains=[], frame_domains=[])


def van_apps(drawn: list[tuple[Callable[..., Any], dict[str, Any]]]) -> Apps:
    """The Apps extension: the VAN view, the tools that name it (each a function and its
    ``add_tool`` arguments) and the view's app-only refresh among them."""
    apps = Apps()
    apps.add_html_resource(
        APP_URI,
        app_html(),
        name="van",
        title="See the VAN",
        description="MCP App: draws the result of status, up, down, setup and diagnose "
        "(sites, links, listeners, model actions, findings)",
        csp=NO_DOMAINS,
        prefers_border=True,
    )
    for function, arguments in drawn:
        visibility: list[Visibility] | None = (
            ["app"] if arguments.get("name") == VIEW_REFRESH else None
        )
        apps.tool(resource_uri=APP_URI, visibility=visibility, **arguments)(function)
    return apps


def _for_model(tool: dict[str, Any]) -> bool:
    ui = (tool.get("_meta") or {}).get("ui")
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return not isinstance(visibility, list) or "model" in visibility


def _without_ui(tool: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (tool.get("_meta") or {}).items() if k != "ui"}
    return {k: v for k, v in tool.items() if k != "_meta"} | ({"_meta": meta} if meta else {})


async def apps_only_for_declared_clients(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """tools/list for a client without the extension: no ``_meta.ui``, no app-only tool."""
    result = await call_next(ctx)
    if ctx.method != "tools/list" or client_supports_apps(ctx):
        return result
    listed = (
        result.model_dump(by_alias=True, exclude_none=True, mode="json")
        if isinstance(result, ListToolsResult)
        else result
    )
    if not isinstance(listed, dict) or not isinstance(listed.get("tools"), list):
        return result
    tools = [_without_ui(t) for t in listed["tools"] if isinstance(t, dict) and _for_model(t)]
    return listed | {"tools": tools}
