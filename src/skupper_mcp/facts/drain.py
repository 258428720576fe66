"""What a drain of a routing key did on a running router: the tcpConnectors that
``scripts/drain.sh`` deleted through the router's management (``skmanage delete
--type=tcpConnector``), or why none was. Pure.

A drain is the one way to take a key out of the network without stopping its router: a
deleted tcpConnector's address has no local destination, and the withdrawal reaches the
other routers on the mobile-address sync's next tick with no hold, where a stopped router's
addresses stay routable on a 3.4.x router for its link-state hold (30-63 s). skrouterd
closes the deleted connector's open connections (``dropTcpConnections``, default true,
``skrouter.json@3.5.1``; Skupper does not set it).

How many that closes is read in the same script right before the deletes: the router's
management reports, for each tcpConnector, ``connectionsOpened`` and ``connectionsClosed``
(``qd_entity_refresh_tcpConnector``, ``src/adaptors/tcp/tcp_adaptor.c@3.5.1:2747-2765``,
``@3.4.2:2627-2645``); ``connectionsOpened`` starts at 1 for the connector's own
egress-dispatch connection (``TL_setup_connector``, ``@3.5.1:401-409``), and each connection
to the server adds one when it opens and one to ``connectionsClosed`` when it closes
(``@3.5.1:1310,586``), so the open ones are ``opened - closed - 1``. The schema's
``tcpConnection`` entity (``skrouter.json@3.5.1:1905``, ``@3.4.2:1772``: address, host,
direction) is never filled at those releases (no entity adapter in
``python/skupper_router_internal/management/agent.py``, no refresh in the adaptor): a query
of it answers an empty list whatever is open, so it is not asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..connectors.shell import program
from ..errors import Unparsed
from .connector_status import management_entities
from .framing import STDERR, Frame, split_frames
from .unparsed import first_line

#: What skmanage may print for one delete (it prints nothing when done), or for the query
#: of the router's tcpConnectors' counts (three attributes each, some 120 bytes).
MAX_DRAIN_BYTES = 16 * 1024
#: A tcpConnector's name as Skupper renders it: ``[connector/]<name>@<host>``.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,252}")


#: How many tcpConnectors of one key the drain deletes at most (``drain.sh``'s ``head``):
#: Skupper renders one per Connector of the key on the site.
MOST_DELETES = 8


@dataclass(frozen=True)
class Drained:
    """The tcpConnectors deleted (their names), and why the key may still be served from
    this router (None: every one the router's config holds for it was deleted).
    ``complete`` False: the answer ended before the script did, so more may have been
    deleted than ``deleted`` names (the router is to be treated as maybe withdrawn)."""

    deleted: tuple[str, ...]
    problem: str | None
    complete: bool = True
    #: The connections open through the deleted tcpConnectors when the router was asked,
    #: right before the deletes (its router closed them with the connectors); None: could
    #: not be read (``open_unread`` says why), never a guessed 0.
    open_at_withdrawal: int | None = None
    open_unread: str | None = None


#: The shipped script that drains a key.
DRAIN_SCRIPT = "drain.sh"


def drain_operands(namespace: str, container: str, routing_key: str) -> tuple[str | int, ...]:
    """``scripts/drain.sh``'s positional parameters, in its order."""
    return (namespace, container, routing_key, MAX_DRAIN_BYTES, MOST_DELETES)


def drain_script(namespace: str, container: str, routing_key: str) -> str:
    """The command that deletes the key's tcpConnectors; the script is ``scripts/drain.sh``."""
    return program(DRAIN_SCRIPT, *drain_operands(namespace, container, routing_key))


def parse_drain(output: str, routing_key: str) -> Drained:
    """What ``drain.sh`` did. Raises ``Unparsed`` when its output is not what it prints; an
    answer cut after a delete is a partial ``Drained`` (``complete`` False), never fewer
    names read as all."""
    frames = split_frames(output)
    tags = [f.tag for f in frames]
    if "no-management" in tags:
        return Drained((), "the router's config names no management listener to ask")
    if "no-connector" in tags:
        return Drained((), f"the router's config holds no tcpConnector for {routing_key}")
    read = _read_deletes(frames)
    if read.found is None:
        raise Unparsed("the drain did not say how many tcpConnectors it found")
    asked = min(read.found, MOST_DELETES)
    if not read.ended:
        # cut: the deletes named ran, and maybe more (a delete whose status was lost too)
        if not (read.deleted or read.problems or read.pending):
            raise Unparsed("the drain did not run to its end")
        done = len(read.deleted) + len(read.problems) + (read.pending is not None)
        read.problems.append(
            f"the drain's answer was cut after {done} of {asked} deletes: "
            "more of the key's tcpConnectors may have been deleted"
        )
        # the counts cover the named deletes only: the ones cut off may have closed more
        unsure = "the drain's answer was cut, so more connectors than it names may be gone"
        return Drained(tuple(read.deleted), "; ".join(read.problems), False, None, unsure)
    if read.pending is not None or len(read.deleted) + len(read.problems) != asked:
        raise Unparsed("the drain's deletes do not add up to the tcpConnectors it found")
    if read.found > MOST_DELETES:
        read.problems.append(
            f"the router holds {read.found} tcpConnectors for {routing_key}; the drain "
            f"deletes the first {MOST_DELETES}, so the key is still served from it"
        )
    opened = _open_through(frames, tuple(read.deleted))
    return Drained(tuple(read.deleted), "; ".join(read.problems) or None, True, *opened)


def _open_through(frames: list[Frame], names: tuple[str, ...]) -> tuple[int | None, str | None]:
    """How many connections were open through the tcpConnectors ``names`` by the query of
    their counts before the deletes, or None and why not."""
    body, rc, stderr, asked = "", None, "", False
    for frame in frames:
        if frame.tag == "connections":
            asked, body = True, frame.body
        elif frame.tag == "delete":
            asked = False
        elif frame.tag == STDERR and asked:
            stderr = frame.body
        elif frame.tag == "rc" and asked:
            rc = frame.argument
    if not names:
        return 0, None
    if rc is None:
        return None, "the query of the router's tcpConnectors did not run to its end"
    if rc != "0":
        said = first_line(stderr) or first_line(body) or f"exit {rc}"
        return None, f"skmanage query --type=tcpConnector: {said}"
    if len(body.encode()) >= MAX_DRAIN_BYTES:
        return None, f"the router's tcpConnectors' counts passed {MAX_DRAIN_BYTES} bytes"
    try:
        return _count_open(body, names), None
    except Unparsed as exc:
        return None, f"the router's tcpConnectors' counts could not be read: {exc}"


def _count_open(body: str, names: tuple[str, ...]) -> int:
    counts: dict[str, int] = {}
    for entity in management_entities(body):
        if not isinstance(entity, dict) or entity.get("name") not in names:
            continue
        opened, closed = entity.get("connectionsOpened"), entity.get("connectionsClosed")
        if not _whole(opened) or not _whole(closed):
            raise Unparsed(f"{entity['name']}'s counts are not numbers")
        assert isinstance(opened, int) and isinstance(closed, int)
        # the connector's own egress-dispatch connection counts as opened, never closed
        if opened - closed - 1 < 0:
            raise Unparsed(f"{entity['name']}'s counts do not add up ({opened} - {closed} - 1)")
        counts[str(entity["name"])] = opened - closed - 1
    missing = [n for n in names if n not in counts]
    if missing:
        raise Unparsed(f"no counts for {', '.join(missing)}")
    return sum(counts.values())


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


@dataclass
class _Deletes:
    """The frames of ``drain.sh``'s deletes, as read."""

    deleted: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: a delete whose status did not come
    pending: str | None = None
    found: int | None = None
    ended: bool = False


def _read_deletes(frames: list[Frame]) -> _Deletes:
    read, stderr = _Deletes(), ""
    for frame in frames:
        if frame.tag == "found":
            read.found = _count(frame.argument)
        elif frame.tag == "end":
            read.ended = True
        elif frame.tag == "delete":
            if not _NAME.fullmatch(frame.argument):
                raise Unparsed(f"a tcpConnector name that is not Skupper's: {frame.argument!r}")
            read.pending, stderr = frame.argument, ""
        elif frame.tag == STDERR and read.pending is not None:
            stderr = frame.body
        elif frame.tag == "rc" and read.pending is not None:
            if frame.argument == "0":
                read.deleted.append(read.pending)
            else:
                said = first_line(stderr) or f"exit {frame.argument}"
                read.problems.append(f"skmanage delete {read.pending}: {said}")
            read.pending = None
    return read


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) < 6):
        raise Unparsed(f"a count that is not a number: {text!r}")
    return int(text)
