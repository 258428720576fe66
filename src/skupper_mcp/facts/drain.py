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
from dataclasses import dataclass

from ..connectors.shell import program
from ..errors import Unparsed
from .framing import STDERR, split_frames
from .unparsed import first_line

#: What skmanage may print for one delete (it prints nothing when done).
MAX_DRAIN_BYTES = 8 * 1024
#: A tcpConnector's name as Skupper renders it: ``[connector/]<name>@<host>``.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,252}")


@dataclass(frozen=True)
class Drained:
    """The tcpConnectors deleted (their names), and why the key may still be served from
    this router (None: every one the router's config holds for it was deleted)."""

    deleted: tuple[str, ...]
    problem: str | None


#: The shipped script that drains a key.
DRAIN_SCRIPT = "drain.sh"


def drain_operands(namespace: str, container: str, routing_key: str) -> tuple[str | int, ...]:
    """``scripts/drain.sh``'s positional parameters, in its order."""
    return (namespace, container, routing_key, MAX_DRAIN_BYTES)


def drain_script(namespace: str, container: str, routing_key: str) -> str:
    """The command that deletes the key's tcpConnectors; the script is ``scripts/drain.sh``."""
    return program(DRAIN_SCRIPT, *drain_operands(namespace, container, routing_key))


def parse_drain(output: str, routing_key: str) -> Drained:
    """What ``drain.sh`` did. Raises ``Unparsed`` when its output is not what it prints."""
    frames = split_frames(output)
    tags = [f.tag for f in frames]
    if "no-management" in tags:
        return Drained((), "the router's config names no management listener to ask")
    if "no-connector" in tags:
        return Drained((), f"the router's config holds no tcpConnector for {routing_key}")
    deleted: list[str] = []
    problems: list[str] = []
    name, stderr = None, ""
    for frame in frames:
        if frame.tag == "delete":
            if not _NAME.fullmatch(frame.argument):
                raise Unparsed(f"a tcpConnector name that is not Skupper's: {frame.argument!r}")
            name, stderr = frame.argument, ""
        elif frame.tag == STDERR and name is not None:
            stderr = frame.body
        elif frame.tag == "rc" and name is not None:
            if frame.argument == "0":
                deleted.append(name)
            else:
                said = first_line(stderr) or f"exit {frame.argument}"
                problems.append(f"skmanage delete {name}: {said}")
            name = None
    if name is not None or not (deleted or problems):
        raise Unparsed("the drain did not run to its end")
    return Drained(tuple(deleted), "; ".join(problems) or None)
