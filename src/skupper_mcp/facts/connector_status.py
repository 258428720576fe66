"""The router's own status of its connectors: its management answer for the ``connector``
entity, read with ``skmanage query --type=connector`` inside the router container. Pure.

skrouterd keeps a connector's last failure in ``connectionMsg`` while it retries
(``connection_manager.c@3.4.2:193-219``: ``connectionStatus`` is the connector's state,
``CONNECTING``, ``SUCCESS``, ``FAILED``, ``INITIALIZING`` or ``CLOSING``; ``connectionMsg``
the text of its last failure, ``Connection to HOST:PORT failed: NAME DESCRIPTION``,
``qd_connector.c@3.4.2:407-426``), where the log holds that text only once. skmanage prints
the entities as a JSON list of objects (``python/skupper_router_internal/tools/
command.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import host_json
from ..connectors.shell import program
from ..errors import Unparsed
from .framing import STDERR, split_frames
from .unparsed import first_line

#: What one management answer may be: a router has a connector per link, each some 1 KiB.
MAX_CONNECTORS_BYTES = 64 * 1024


@dataclass(frozen=True)
class ConnectorStatus:
    """One ``connector`` entity as the router reports it (host text, all of it)."""

    name: str
    role: str
    host: str
    port: str
    status: str
    message: str

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"


def connector_status_script(namespace: str, container: str, max_bytes: int) -> str:
    """The command that prints the router's connector entities, framed; the script is
    ``scripts/connector-status.sh``."""
    return program("connector-status.sh", namespace, container, int(max_bytes))


def parse_connector_status(output: str, max_bytes: int) -> list[ConnectorStatus] | None:
    """The connectors the router reports; None when the site has no management listener to
    ask. Raises ``Unparsed`` when skmanage failed or printed what is not its answer."""
    body, rc, stderr, asked = "", None, "", False
    for frame in split_frames(output):
        if frame.tag == "no-management":
            return None
        if frame.tag == "connectors":
            asked, body = True, frame.body
        elif frame.tag == STDERR and asked:
            stderr = frame.body
        elif frame.tag == "rc" and asked:
            rc = (
                int(frame.argument) if frame.argument.isascii() and frame.argument.isdigit() else -1
            )
    if not asked or rc is None:
        raise Unparsed("the management query did not run to its end")
    if rc != 0:
        raise Unparsed(f"skmanage exited {rc}: {first_line(stderr) or first_line(body)}")
    if len(body.encode()) >= max_bytes:
        raise Unparsed(f"the answer is longer than {max_bytes} bytes")
    return [_connector(e) for e in management_entities(body)]


def management_entities(body: str) -> list[object]:
    """The entities of an ``skmanage query`` answer (a JSON list); ``Unparsed`` otherwise."""
    try:
        entities = host_json.loads(body)
    except ValueError as exc:
        raise Unparsed(f"not JSON: {exc}") from None
    if not isinstance(entities, list):
        raise Unparsed("not a list of entities")
    return entities


def _connector(entity: object) -> ConnectorStatus:
    if not isinstance(entity, dict):
        raise Unparsed("an entity that is not an object")
    values = {}
    for key in ("name", "role", "host", "port", "connectionStatus", "connectionMsg"):
        value = entity.get(key, "")
        if value is None:
            value = ""
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise Unparsed(f"the connector's {key} is not a string")
        values[key] = str(value)
    return ConnectorStatus(
        values["name"],
        values["role"],
        values["host"],
        values["port"],
        values["connectionStatus"],
        values["connectionMsg"],
    )
