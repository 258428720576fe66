"""See the VAN: one self-contained HTML document that draws the tools' results.

The drawing is done once, in JavaScript inside ``van.html``, because the MCP App (the
``ui://skupper/van.html`` resource) must draw what the host sends it over postMessage. Outside
an agent, ``page_html`` embeds results in the same document (``skupper-mcp status --html``).
The document loads nothing: no external script, style, font or image (its CSP says so).

Results carry text read from hosts (untrusted): the page only sets it as text, never as
markup, and the embedded JSON is escaped so that it cannot close its script element.

The topology's picture (``skupper://topology.svg``) is ``view.svg``'s, imported by the one
that draws it: the MCP App's registration at the server's start needs only this document.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel

__all__ = [
    "APP_MIME_TYPE",
    "APP_URI",
    "app_html",
    "page_html",
]

#: The MCP App resource (MCP Apps extension io.modelcontextprotocol/ui) and its MIME type.
APP_URI = "ui://skupper/van.html"
APP_MIME_TYPE = "text/html;profile=mcp-app"

_DATA = '<script type="application/json" id="van-data">null</script>'


@cache
def app_html() -> str:
    """The MCP App document: it waits for the host to send a tool result."""
    document = files(__package__).joinpath("van.html").read_text(encoding="utf-8")
    assert _DATA in document, "van.html lost its data element"
    return document


def embedded_json(value: Any) -> str:
    """JSON safe inside a <script> element: no <, > or & (JSON's own escapes stand for them),
    so host text cannot close the element or open a comment."""
    text = json.dumps(value, ensure_ascii=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def page_html(results: dict[str, Any]) -> str:
    """The same document with ``results`` (by tool: status, up, down, setup, diagnose; each a
    result model or its JSON) drawn as soon as it loads."""
    data = {
        name: result.model_dump(mode="json", by_alias=True)
        if isinstance(result, BaseModel)
        else result
        for name, result in results.items()
    }
    element = _DATA.replace(">null<", f">{embedded_json(data)}<")
    return app_html().replace(_DATA, element, 1)
