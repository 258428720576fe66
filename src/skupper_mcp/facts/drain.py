"""What a drain of a routing key did on a running router: the tcpConnectors that
``scripts/drain.sh`` deleted through the router's management (``skmanage delete
--type=tcpConnector``), or why none was. Pure.

A drain is the one way to take a key out of the network without stopping its router: a
deleted tcpConnector's address has no local destination, and the withdrawal reaches the
other routers on the mobile-address sync's next tick with no hold, where a stopped router's
addresses stay routable on a 3.4.x router for its link-state hold (30-63 s). skrouterd
closes the deleted connector's open connections (``dropTcpConnections``, default true,
``skrouter.json@3.5.1``; Skupper does not set it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..connectors.shell import program
from ..errors import Unparsed
from .framing import STDERR, Frame, split_frames
from .unparsed import first_line

#: What skmanage may print for one delete (it prints nothing when done).
MAX_DRAIN_BYTES = 8 * 1024
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
        return Drained(tuple(read.deleted), "; ".join(read.problems), complete=False)
    if read.pending is not None or len(read.deleted) + len(read.problems) != asked:
        raise Unparsed("the drain's deletes do not add up to the tcpConnectors it found")
    if read.found > MOST_DELETES:
        read.problems.append(
            f"the router holds {read.found} tcpConnectors for {routing_key}; the drain "
            f"deletes the first {MOST_DELETES}, so the key is still served from it"
        )
    return Drained(tuple(read.deleted), "; ".join(read.problems) or None)


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
