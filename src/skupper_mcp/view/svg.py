"""The topology as a static SVG picture (the ``skupper://topology.svg`` resource).

Consumers on the left, providers on the right, the links the topology declares between them
and each consumer's listeners with the provider they reach. It is what topology.env says, not
live state (that is the MCP App's). No script, no external reference; every name is XML-escaped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from skupper_mcp.topology import Topology

WIDTH = 900
LEFT = 50  # room left of the consumers for a link between two of them
BOX_WIDTH = 300
LINE = 18
PAD = 10
GAP = 18
TOP = 40


@dataclass
class _Box:
    host: str
    site: str
    role: str
    lines: list[str] = field(default_factory=list)
    x: int = 0
    y: int = 0

    @property
    def height(self) -> int:
        return 2 * PAD + 20 + len(self.lines) * LINE


def _boxes(topology: Topology) -> tuple[list[_Box], list[_Box], list[tuple[str, str, str]]]:
    """(consumers, providers, links as (from host, to host, endpoint))."""
    local = topology.local
    consumers = [
        _Box(
            local.name,
            local.site_name,
            "consumer",
            [f"site {local.site_name} (podman)"]
            + [
                f":{e.local_port} \u2192 {e.label} ({e.routing_key})"
                for e in topology.model_endpoints()
            ],
        )
    ]
    providers = [
        _Box(
            p.name,
            p.site_name,
            "provider",
            [
                f"site {p.site_name} (podman)",
                f"{p.public_host}:{p.inter_router_port}",
            ]
            + [
                f"model {e.name + ' ' if e.name else ''}{e.model_host}:{e.model_port}"
                for e in p.endpoints
            ],
        )
        for p in topology.providers
    ]
    links = [
        (local.name, p.name, f"{p.public_host}:{p.inter_router_port}") for p in topology.providers
    ]
    kube = topology.kubernetes
    if kube is not None:
        by_name = {p.name: p for p in topology.providers}
        by_label = {e.label: e for e in topology.model_endpoints()}
        consumers.append(
            _Box(
                kube.name,
                kube.site_name,
                "consumer",
                [f"site {kube.site_name} (kubernetes, {kube.namespace})"]
                + [
                    f":{port} \u2192 {name} ({by_label[name].routing_key})"
                    if name in by_label
                    else f":{port} \u2192 {name}"
                    for name, port in kube.listeners.items()
                ],
            )
        )
        for name in kube.direct_links:
            if name in by_name:
                p = by_name[name]
                links.append((kube.name, name, f"{p.public_host}:{p.inter_router_port}"))
        if any(p.name not in kube.direct_links for p in topology.providers):
            endpoint = f"{local.public_host or '(LOCAL_PUBLIC_HOST not set)'}:"
            links.append((kube.name, local.name, endpoint + str(local.inter_router_port)))
    return consumers, providers, links


#: How many characters of a line fit in a box; a longer one is cut, whole in its tooltip.
FIT = 46


def _text(x: int, y: int, content: str, css: str = "") -> str:
    klass = f" class={quoteattr(css)}" if css else ""
    if len(content) <= FIT:
        return f'<text x="{x}" y="{y}"{klass}>{escape(content)}</text>'
    cut = content[: FIT - 1] + "\u2026"
    return f'<text x="{x}" y="{y}"{klass}>{escape(cut)}<title>{escape(content)}</title></text>'


def topology_svg(topology: Topology) -> str:
    """The picture of ``topology``: a standalone SVG document."""
    consumers, providers, links = _boxes(topology)
    for column, x in ((consumers, LEFT), (providers, WIDTH - BOX_WIDTH - 10)):
        y = TOP
        for box in column:
            box.x, box.y = x, y
            y += box.height + GAP
    height = max(b.y + b.height for b in [*consumers, *providers]) + 10
    at = {b.host: b for b in [*consumers, *providers]}
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-labelledby="title desc">',
        '<title id="title">Skupper VAN topology</title>',
        '<desc id="desc">'
        + escape(
            "Consumers: "
            + ", ".join(b.host for b in consumers)
            + ". Providers: "
            + ", ".join(b.host for b in providers)
            + ". Links: "
            + ", ".join(f"{a} to {b}" for a, b, _ in links)
            + "."
        )
        + "</desc>",
        "<style>text{font:13px sans-serif;fill:#1d2329}.small{font-size:11px;fill:#5b6670}"
        ".host{font-weight:bold;font-size:14px}rect{fill:#f5f7f9;stroke:#6e7781;stroke-width:2}"
        "path{fill:none;stroke:#0969da;stroke-width:2}</style>",
        '<rect x="0" y="0" width="100%" height="100%" style="fill:#fff;stroke:none"/>',
        _text(LEFT, 24, "Consumers", "small"),
        _text(WIDTH - BOX_WIDTH - 10, 24, "Providers", "small"),
    ]
    for origin, target, endpoint in links:
        a, b = at[origin], at[target]
        y1, y2 = a.y + 24, b.y + 24
        if b.role == "consumer":  # a consumer dialling the other: along the left edge
            path = f"M{a.x},{y1} C{a.x - 40},{y1} {b.x - 40},{y2} {b.x},{y2}"
        else:
            x1, x2 = a.x + BOX_WIDTH, b.x
            mid = (x1 + x2) // 2
            path = f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"
        parts.append(
            f"<g data-link={quoteattr(f'{origin}->{target}')}>"
            f"<title>{escape(f'link {origin} to {target} ({endpoint})')}</title>"
            f'<path d="{path}"/></g>'
        )
    for box in [*consumers, *providers]:
        parts.append(
            f'<g data-site={quoteattr(box.host)} transform="translate({box.x},{box.y})">'
            f"<title>{escape(f'{box.host}: {box.role}, site {box.site}')}</title>"
            f'<rect width="{BOX_WIDTH}" height="{box.height}" rx="8"/>'
            + _text(PAD, PAD + 15, f"{box.host} ({box.role})", "host")
            + "".join(
                _text(PAD, PAD + 20 + (i + 1) * LINE - 4, line, "small")
                for i, line in enumerate(box.lines)
            )
            + "</g>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def topology_error_svg(error: str) -> str:
    """A picture that says why there is no topology to draw."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 860 60" width="860" height="60">'
        "<title>Skupper VAN topology</title>"
        + _text(10, 34, f"The topology is not usable: {error}")
        + "</svg>\n"
    )
