"""Text for people: the VAN diagram, Markdown resources and aligned CLI tables. Pure."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from functools import partial

from skupper_mcp.facts.model_endpoint import quoted_ids
from skupper_mcp.results import (
    CertificateEnd,
    CheckResult,
    DiagnoseResult,
    HistoryResult,
    JournalEntry,
    LinkStatus,
    ModelAction,
    ModelReading,
    ModelRow,
    ModelsResult,
    OperationResult,
    PoolBackend,
    PoolStatus,
    ResolveResult,
    StatusResult,
    TestModelResult,
)
from skupper_mcp.safe_text import safe_text
from skupper_mcp.topology import Topology
from skupper_mcp.topology.diagram import topology_diagram
from skupper_mcp.vocabulary import SITE_UP_CLUSTER, SITE_UP_PODMAN, plural

Cell = str | int | float | bool | None


# --------------------------------------------------------------------------- tables


def _cell(value: Cell) -> str:
    """A cell's text on one line: a line break a host put in it (a pod phase, a unit's
    state) would otherwise end the row and write lines of its own under the table."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return one_line(str(value))


def one_line(text: str) -> str:
    """``text`` with its line breaks shown as ``\\n`` and its tabs as spaces."""
    return text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " ")


GAP = "  "
#: The narrowest a wrapped column gets (a header never wraps: it sets its column's floor).
MIN_COLUMN = 6


def _wrap(text: str, width: int) -> list[str]:
    """A cell's lines at most ``width`` wide, broken at spaces only: a word, a name or an
    address is never cut (a word wider than ``width`` stands on a line of its own)."""
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def longest_word(text: str) -> int:
    """The widest part of ``text`` that a wrap may not break (what lies between spaces)."""
    return max((len(word) for word in text.split()), default=0)


def wrap_text(text: str, width: int | None) -> str:
    """Prose (a summary) wrapped at spaces to ``width``; unchanged without one (a pipe)."""
    if width is None:
        return text
    return "\n".join("\n".join(_wrap(line, width)) if line else line for line in text.splitlines())


def _capped(natural: list[int], floors: list[int], budget: int) -> list[int] | None:
    """The widest columns give up room first, each down to its floor, until the widths fit
    ``budget``; None when even the floors do not fit."""
    if sum(floors) > budget:
        return None
    cap = max(natural)
    while sum(min(n, max(cap, f)) for n, f in zip(natural, floors, strict=True)) > budget:
        cap -= 1
    return [min(n, max(cap, f)) for n, f in zip(natural, floors, strict=True)]


def _fitted(
    natural: list[int], floors: list[int], prose: list[bool], budget: int
) -> list[int] | None:
    """Column widths that fit ``budget``, each at least its floor (its widest word). Prose
    (cells with spaces: details, reasons) wraps first, at its words; the other columns
    give up room only when the prose alone cannot make it."""
    if sum(natural) <= budget:
        return natural
    names_kept = [f if p else n for n, f, p in zip(natural, floors, prose, strict=True)]
    return _capped(natural, names_kept, budget) or _capped(natural, floors, budget)


def _records(headers: Sequence[str], cells: list[list[str]], width: int) -> str:
    """The narrow layout: one block of "Header: value" lines per row."""
    pad = max(len(h) for h in headers) + 2
    blocks = []
    for row in cells:
        lines = []
        for header, cell in zip(headers, row, strict=True):
            if longest_word(cell) > width - pad:
                # a word too wide for beside its header goes under it, whole
                lines.append(f"{header}:")
                lines += _wrap(cell, width)
                continue
            wrapped = _wrap(cell, max(width - pad, MIN_COLUMN))
            lines.append(f"{header + ':':<{pad}}{wrapped[0]}".rstrip())
            lines += [" " * pad + more for more in wrapped[1:]]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def text_table(
    headers: Sequence[str], rows: Sequence[Sequence[Cell]], width: int | None = None
) -> str:
    """Columns aligned with spaces, a header underlined with dashes.

    With a ``width`` the table fits it: long cells wrap onto more lines of their row, and
    when even that cannot fit, each row becomes a block of "Header: value" lines. Without
    one (a pipe) every row is one line, however long.
    """
    cells = [[_cell(c) for c in row] for row in rows]
    natural = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            natural[i] = max(natural[i], len(cell))
    widths = natural
    if width is not None:
        # a column is never narrower than its widest word: narrower, a word would be cut
        words = [
            max((longest_word(row[i]) for row in cells), default=0) for i in range(len(natural))
        ]
        floors = [
            min(n, max(len(h), MIN_COLUMN, w))
            for n, h, w in zip(natural, headers, words, strict=True)
        ]
        prose = [any(" " in row[i] for row in cells) for i in range(len(headers))]
        fitted = _fitted(natural, floors, prose, width - len(GAP) * (len(headers) - 1))
        if fitted is None:
            return _records(headers, cells, width)
        widths = fitted
    lines = [
        GAP.join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        GAP.join("-" * w for w in widths),
    ]
    for row in cells:
        wrapped = [_wrap(c, w) for c, w in zip(row, widths, strict=True)]
        for i in range(max(len(w) for w in wrapped)):
            parts = [
                (w[i] if i < len(w) else "").ljust(n) for w, n in zip(wrapped, widths, strict=True)
            ]
            lines.append(GAP.join(parts).rstrip())
    return "\n".join(lines)


#: What Markdown acts on inside a table cell: the cell's end (|), code, emphasis, links,
#: HTML and the backslash itself. Each is escaped with a backslash, which CommonMark allows
#: before any ASCII punctuation; a cell's line breaks are ``\\n`` already (``_cell``).
_MARKDOWN_ACTIVE = re.compile(r"[\\|`*_\[\]<>#~!]")


#: What makes a word a link by itself to a renderer (GFM's autolinks: a scheme's ``://``,
#: ``www.``, an address with ``@``; ``mailto:``): such a word is shown as code, which no
#: renderer links. Words are found first (``\S+``, once each) and then searched: one pattern
#: with ``\S*`` around the marker retried every start of a long word (16 K characters: 22 s).
_WORD = re.compile(r"\S+")
_LINKISH = re.compile(r"://|www\.|@|mailto:", re.IGNORECASE)
_BACKTICKS = re.compile("`+")


def _escaped(text: str) -> str:
    return _MARKDOWN_ACTIVE.sub(lambda found: "\\" + found[0], text)


def _code_span(word: str) -> str:
    """``word`` as a code span: fenced by one backtick more than its longest run, a space
    inside the fence where it starts or ends with one; its pipes escaped, as a table cell
    needs even in code."""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(word)), default=0) + 1)
    pad = " " if word.startswith("`") or word.endswith("`") else ""
    inside = word.replace("|", "\\|")
    return f"{fence}{pad}{inside}{pad}{fence}"


def markdown_cell(value: Cell) -> str:
    """A cell's text as Markdown shows it literally, on one line of its row: Markdown's
    own characters escaped, and a word that would become a link by itself (a bare URL a
    host sent, ``http://...`` or ``www....``) shown as code, not as a link to click."""
    return _WORD.sub(
        lambda word: _code_span(word[0]) if _LINKISH.search(word[0]) else _escaped(word[0]),
        _cell(value),
    )


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """A GitHub-flavoured Markdown table whose cells (host text among them) stay cells."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- diagram


def site_rows(topology: Topology) -> list[list[Cell]]:
    """The site configuration table: site, host, platform, role, link port, model port."""
    local = topology.local
    rows: list[list[Cell]] = [
        [local.site_name, local.name, "podman", "consumer", local.inter_router_port, None]
    ]
    for p in topology.providers:
        ports: Cell = ", ".join(str(e.model_port) for e in p.endpoints)
        if not p.multi_endpoint:
            ports = p.model_port
        rows.append([p.site_name, p.name, "podman", "provider", p.inter_router_port, ports])
    kube = topology.kubernetes
    if kube:
        ports = ", ".join(str(port) for port in kube.listeners.values()) or None
        rows.append([kube.site_name, kube.name, "kubernetes", "consumer", None, ports])
    return rows


SITE_HEADERS = ["Site", "Host", "Platform", "Role", "Link port", "Model port"]
ROUTING_HEADERS = ["Host", "Local port", "Routing key", "Default profile", "Profiles"]


def routing_rows(topology: Topology) -> list[list[Cell]]:
    """The host-based routing table: which local port reaches which provider's model (a
    row per model endpoint, ``HOST/ENDPOINT`` for a host with several)."""
    return [
        [e.label, e.local_port, e.routing_key, e.default_profile, ", ".join(e.profiles)]
        for e in topology.model_endpoints()
    ]


def topology_markdown(topology: Topology) -> str:
    """The ``skupper://topology`` resource: diagram, sites and routing."""
    return "\n".join(
        [
            "# Skupper VAN topology",
            "",
            f"From `{topology.path}`.",
            "",
            "```",
            topology_diagram(topology),
            "```",
            "",
            "## Sites",
            "",
            markdown_table(SITE_HEADERS, site_rows(topology)),
            "",
            "## Host-based routing",
            "",
            markdown_table(ROUTING_HEADERS, routing_rows(topology)),
            "",
        ]
    )


# --------------------------------------------------------------------------- results


def _state_text(state: str, reason: str) -> str:
    """A site's condition with why, e.g. ``stopped (stopped by down, as asked)``; a healthy
    site's why is what its Controller and Router cells say, so only what it adds to them
    (it came back by itself after a reboot) is said here."""
    if state == "up":
        for said in (SITE_UP_PODMAN, SITE_UP_CLUSTER):
            if reason.startswith(said):
                reason = reason.removeprefix(said).removeprefix("; ")
                break
    return f"{state} ({reason})" if reason else state


def _link_text(link: LinkStatus) -> str:
    """A link's status cell: connected or not (``LinkStatus.connected``), with what the
    dialling router reports when it is not."""
    if link.connected is None:
        return link.status
    return "connected" if link.connected else f"not connected ({link.status})"


Table = Callable[[Sequence[str], Sequence[Sequence[Cell]]], str]


def _certificate_text(cert: CertificateEnd | None) -> str | None:
    """The date the site's first certificate ends, and which (its days left when few)."""
    if cert is None:
        return None
    text = f"{cert.ends[:10]} ({cert.name})"
    if cert.days_left <= 0:
        return f"ENDED {text}"
    return f"{text}, {cert.days_left:.0f} days" if cert.days_left <= 60 else text


def status_tables(status: StatusResult, table: Table = markdown_table) -> dict[str, str]:
    """The status tables (sites, links, listeners), Markdown unless another ``table``."""
    sites = table(
        [
            "Host",
            "Site",
            "Role",
            "Platform",
            "State",
            "Controller",
            "Router",
            "Container",
            "Certificates end",
            "Detail",
        ],
        [
            [
                s.host,
                s.site,
                s.role,
                s.platform,
                _state_text(s.state, s.state_reason),
                s.controller,
                s.router,
                s.container,
                _certificate_text(s.certificate),
                s.detail,
            ]
            for s in status.sites
        ],
    )
    links = table(
        ["From", "To", "Endpoint", "TCP probe", "Status"],
        [
            [li.from_site, li.to_site, li.endpoint, li.tcp_probe, _link_text(li)]
            for li in status.links
        ],
    )
    # the Ready column only where readiness was read (status --readiness)
    ready = any(li.readiness is not None for li in status.listeners)
    listener_rows: list[list[Cell]] = [
        [
            li.site,
            li.port,
            li.routing_key,
            li.bound,
            li.state,
            *([_readiness_cell(li.readiness)] if ready else []),
            quoted_ids(li.model_ids, li.model_ids_cut) or None,
            li.base_url,
            li.service,
            li.detail,
        ]
        for li in status.listeners
    ]
    listeners = table(
        [
            "Site",
            "Port",
            "Routing key",
            "Bound",
            "State",
            *(["Ready"] if ready else []),
            "Model",
            "URL",
            "Service",
            "Detail",
        ],
        listener_rows,
    )
    tables = {"sites": sites, "links": links, "listeners": listeners}
    if status.pools:
        rows = [r for p in status.pools for r in ((p, p.cluster) if p.cluster else (p,))]
        tables["pools"] = table(
            [
                "Pool",
                "Site",
                "Port",
                "Strategy",
                "Bound",
                "State",
                "Backends",
                "Preferred",
                "Detail",
                "Controller says",
            ],
            [
                [
                    p.name,
                    p.site,
                    p.port,
                    p.strategy,
                    p.bound,
                    p.state,
                    ", ".join(_backend_text(b) for b in p.backends),
                    p.preferred,
                    p.detail,
                    _controller_text(p),
                ]
                for p in rows
            ],
        )
    return tables


def _readiness_cell(reading: ModelReading | None) -> str | None:
    """A listener's readiness in status: its state and the load its engine told."""
    if reading is None:
        return None
    load = load_words(reading)
    return reading.state + (f" ({load})" if load else "")


def _controller_text(pool: PoolStatus) -> str | None:
    """What the site's controller wrote on the pool's listener, what it means (its words
    differ by release: 2.2.x's "Not Operational" is the next one's "No matching
    connectors"), and the keys it reaches."""
    if pool.resource is None:
        return None
    said = pool.resource + (" (no connector behind it)" if pool.destination is False else "")
    if pool.reachable_keys is None:
        return said
    return f"{said}; keys reachable: {', '.join(pool.reachable_keys) or 'none'}"


def _backend_text(backend: PoolBackend) -> str:
    mark = {True: "live", False: "down", None: "unknown"}[backend.live]
    return f"{backend.provider} ({mark})"


def status_markdown(status: StatusResult) -> str:
    """The ``skupper://status`` resource."""
    tables = status_tables(status)
    # a reason may quote the model endpoint's ids: host text, shown as a cell's is
    actions = [
        f"- {a.action} `{a.profile}` on {a.endpoint or a.host}: {markdown_cell(a.reason)}"
        for a in status.model_actions
    ]
    parts = [
        "# Skupper VAN status",
        "",
        status.summary,
        "",
        "## Sites",
        "",
        tables["sites"],
        "",
        "## Links",
        "",
        tables["links"],
        "",
        "## Listeners",
        "",
        tables["listeners"],
        "",
    ]
    if "pools" in tables:
        parts += ["## Model pools", "", tables["pools"], ""]
    if actions:
        parts += ["## hosted-model-ctl", "", *actions, ""]
    return "\n".join(parts)


_STATUS_MARK = {"pass": "ok", "warn": "WARN", "fail": "FAIL"}


def check_text(result: CheckResult, width: int | None = None) -> str:
    """``setup --check`` for a terminal: diagram, then one row per check."""
    rows = [[c.site, c.name, _STATUS_MARK[c.status], c.detail, c.hint or ""] for c in result.checks]
    verdict = "precheck passed" if result.ok else "precheck FAILED"
    return "\n".join(
        [
            result.topology,
            "",
            text_table(["Site", "Check", "Status", "Detail", "Hint"], rows, width),
            "",
            wrap_text(f"{verdict}: {result.summary}", width),
        ]
    )


def resolve_text(result: ResolveResult, width: int | None = None) -> str:
    """``resolve NAME`` for a terminal."""
    rows: list[list[Cell]] = [
        ["query", result.query],
        ["host", result.host],
        ["site", result.site],
        ["role", result.role],
        ["profile", result.profile],
        ["profile source", result.profile_source],
        ["model id", result.model_id],
        ["listener port", result.listener_port],
        ["routing key", result.routing_key],
    ]
    if result.endpoint:
        rows.insert(2, ["endpoint", result.endpoint])
    if result.detail:
        rows.append(["detail", result.detail])
    return text_table(["Field", "Value"], rows, width)


def _actions_text(actions: Sequence[ModelAction], width: int | None) -> list[str]:
    if not actions:
        return []
    rows = [[a.action, a.profile, a.endpoint or a.host, a.reason] for a in actions]
    table = text_table(["Action", "Profile", "Host", "Why"], rows, width)
    return ["", "hosted-model-ctl next:", table]


def operation_text(result: OperationResult, width: int | None = None) -> str:
    """``setup``/``up``/``down``/``teardown`` for a terminal: one row per site."""
    rows = [
        [s.host, s.site, s.role, s.outcome, "yes" if s.changed else "no", s.reason or ""]
        for s in result.sites
    ]
    table = text_table(["Host", "Site", "Role", "Outcome", "Changed", "Reason"], rows, width)
    listeners = [
        line
        for li in result.listeners
        for line in _indented(
            f"listener :{li.port} ({li.endpoint or li.provider}) on {li.site}",
            f"{li.state}: {li.detail}" if li.detail else f"{li.state}",
            width,
        )
    ]
    if listeners:
        listeners.insert(0, "")
    return "\n".join(
        [
            table,
            *listeners,
            *_actions_text(result.model_actions, width),
            "",
            wrap_text(result.summary, width),
        ]
    )


def status_text(status: StatusResult, width: int | None = None) -> str:
    """``status`` for a terminal: sites, links, listeners."""
    tables = status_tables(status, partial(text_table, width=width))
    parts = [tables["sites"], "", tables["links"], "", tables["listeners"]]
    if "pools" in tables:
        parts += ["", tables["pools"]]
    summary = wrap_text(status.summary, width)
    return "\n".join([*parts, *_actions_text(status.model_actions, width), "", summary])


MODEL_HEADERS = (
    "Model",
    "Host",
    "Profile",
    "State",
    "Ready",
    "Load",
    "Local URL",
    "Cluster URL",
    "ms",
    "Reason",
)


def model_rows(result: ModelsResult) -> list[list[Cell]]:
    """One row per model row of the catalog, as both the CLI and the resource show it."""
    return [
        [
            _model_cell(r),
            r.host,
            r.profile,
            r.state,
            r.readiness.state if r.readiness is not None else None,
            load_words(r.readiness) if r.readiness is not None else None,
            r.local_base_url,
            r.cluster_base_url,
            round(r.latency_ms) if r.latency_ms is not None else None,
            _model_reason(r),
        ]
        for r in result.rows
    ]


def _model_cell(row: ModelRow) -> str | None:
    """The row's quoted ids, with its kind after them where it is not chat (the default)."""
    ids = quoted_ids(row.model_ids, row.model_ids_cut) or None
    if row.kind == "chat":
        return ids
    return f"{ids} ({row.kind})" if ids else f"({row.kind})"


def load_words(reading: ModelReading) -> str | None:
    """What the engine told of its load, in a few words (None: it told nothing)."""
    told = [
        f"{name} {value}"
        for name, value in (("running", reading.running), ("waiting", reading.waiting))
        if value is not None
    ]
    if reading.kv_cache_used is not None:
        told.append(f"kv {reading.kv_cache_used:.0%}")
    for model in reading.loaded_models or []:
        share = f" ({model.vram_share:.0%} VRAM)" if model.vram_share is not None else ""
        told.append(f"loaded {safe_text(model.name)[:60]!r}{share}")
    if reading.loaded_models == []:
        told.append("nothing loaded")
    return ", ".join(told) or None


def _row_reason(row: ModelRow) -> str | None:
    """The row's reason; where the route answered, the engine's own (its readiness)."""
    reading = row.readiness
    if reading is None or reading.reason == row.reason:
        return row.reason
    if row.prefer is not None or row.members:
        return reading.reason
    if row.state in ("serving", "route-up-no-model"):
        # a loading engine's reason already says what the route's probe got (its 503, or
        # no answer yet): the row's words would only repeat it
        if reading.state in ("ready", "loading"):
            return reading.reason
        return f"{reading.reason}; {row.reason}"
    return row.reason


def _model_reason(row: ModelRow) -> str | None:
    """The row's reason, and how many of its ids a client's configuration would expand
    (our words: the ids are in the Model column)."""
    if not row.placeholder_ids:
        return _row_reason(row)
    note = (
        f"{len(row.placeholder_ids)} id(s) a client configuration would expand as a "
        "placeholder (a way to read your secrets): left out of exports"
    )
    reason = _row_reason(row)
    return f"{reason}; {note}" if reason else note


def models_text(result: ModelsResult, width: int | None = None) -> str:
    """``models`` for a terminal: one row per model, then the summary."""
    return "\n".join([text_table(MODEL_HEADERS, model_rows(result), width), "", result.summary])


def models_markdown(result: ModelsResult) -> str:
    """The ``skupper://models`` resource."""
    table = markdown_table(MODEL_HEADERS, model_rows(result))
    return "\n".join(["# Models on this machine", "", result.summary, "", table, ""])


def test_model_text(result: TestModelResult, width: int | None = None) -> str:
    """``test-model TARGET`` for a terminal: the six checks."""
    rows = [
        ["pass" if c.passed else "FAIL", c.name, c.detail, f"{c.seconds:.2f}s"]
        for c in result.checks
    ]
    table = text_table(["Result", "Check", "Detail", "Time"], rows, width)
    named = result.endpoint or result.host
    head = f"{named} (profile {result.profile}): {result.passed}/{result.total} passed"
    lines = [table, "", wrap_text(head, width)]
    if result.readiness is not None:
        load = load_words(result.readiness)
        said = f"readiness: {result.readiness.state}" + (f" ({load})" if load else "")
        lines.append(wrap_text(f"{said}: {result.readiness.reason}", width))
    return "\n".join(lines)


def _indented(label: str, text: str, width: int | None) -> list[str]:
    """``    label: text``, wrapped to ``width`` under its own indent."""
    line = f"    {label}: {text}"
    if width is None or len(line) <= width:
        return [line]
    indent = " " * (len(label) + 6)
    return textwrap.wrap(
        line, max(width, len(indent) + MIN_COLUMN), subsequent_indent=indent, break_on_hyphens=False
    )


def diagnose_text(result: DiagnoseResult, width: int | None = None) -> str:
    """Each finding with its evidence and next steps, the most serious first."""
    lines = [wrap_text(result.summary, width)]
    for f in result.findings:
        # a symptom or evidence line that held a line break could write a finding of its own
        lines += ["", f"[{f.severity}] {f.id} on {f.host} ({f.site}): {one_line(f.symptom)}"]
        lines += [line for e in f.evidence for line in _indented("evidence", one_line(e), width)]
        lines += _indented("cause", f.cause, width) + _indented("fix", f.fix, width)
        lines += [line for step in f.next for line in _indented("next", step.text, width)]
    unread = [s.host for s in result.sites if not s.read]
    if unread:
        lines += ["", f"not read: {', '.join(unread)}"]
    return "\n".join(lines)


def _journal_outcome(entry: JournalEntry) -> str:
    """What a write did, site by site (``rhel-ai up (start router)``), or its error."""
    if entry.error is not None:
        return f"error: {entry.error}"
    return "; ".join(
        f"{s.host} {s.outcome}" + (f" ({', '.join(s.changed_steps)})" if s.changed_steps else "")
        for s in entry.sites
    )


def history_text(result: HistoryResult, width: int | None = None) -> str:
    """``history`` for a terminal: one row per write, oldest first."""
    rows = [
        [
            e.time + (f" ({e.repeated} times, the last {e.last_time})" if e.repeated > 1 else ""),
            e.client + (f" {e.client_version}" if e.client_version else ""),
            " ".join([e.tool, *(str(v) for v in e.arguments.values())]),
            _journal_outcome(e),
            f"{e.seconds:.1f}s",
        ]
        for e in result.entries
    ]
    lines = [f"no write recorded in {result.path}"]
    if rows:
        # a site's outcome, with the steps that changed it: rhel-ai up (start router)
        headers = ["Time", "Client", "Call", "Sites", "Took"]
        lines = [text_table(headers, rows, width)]
    if result.unreadable:
        lines.append(
            wrap_text(
                f"{plural(result.unreadable, 'line')} of {result.path} "
                "could not be read as an entry (left out)",
                width,
            )
        )
    if result.dropped:
        lines.append(
            wrap_text(
                f"older entries of {result.path} dropped by its rotation: {result.dropped}",
                width,
            )
        )
    return "\n".join(lines)
