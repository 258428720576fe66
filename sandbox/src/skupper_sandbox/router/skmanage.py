"""The router image's ``skmanage``, for ``podman exec <router> skmanage ... query
--type=connector`` (diagnose), ``query --type=tcpConnector [ATTR...]`` and ``delete
--type=tcpConnector --name=N`` (``down``'s drain of a pool member): what the product asks
of it. ``delete`` prints nothing when done (``tools/skmanage.in@3.4.2:195-198``); ``query``
with attribute names prints only those (``tools/skmanage.in@3.4.2:170-175``).

A ``tcpConnector`` entity has ``address``, ``host``, ``port``, ``siteId``, ``processId``,
``connectionsOpened``, ``connectionsClosed``, ``bytesIn``, ``bytesOut``, ``sslProfile`` and
``verifyHostname`` (``skrouter.json@3.5.1``, the same ``@3.4.2``); the router refreshes
``connectionsOpened`` (1 for its egress-dispatch connection, plus one a connection to the
server), ``connectionsClosed``, and ``bytesIn``/``bytesOut`` always 0
(``qd_entity_refresh_tcpConnector``, ``src/adaptors/tcp/tcp_adaptor.c@3.5.1:2747-2765``).

The skupper-router image ships skmanage (``CMakeLists.txt@3.4.2:339-349``, installed beside
skrouterd; ``Containerfile@3.4.2`` adds python3 for it). Its connection options are
``-b/--bus``, ``-t/--timeout`` and ``--ssl-certificate``/``--ssl-key``/``--ssl-trustfile``
(``python/skupper_router_internal/tools/command.py@3.4.2:96-122``); ``query`` prints the
entities of a type as a JSON list of objects. The ``connector`` entity's
``connectionStatus`` is the connector's state (``connection_manager.c@3.4.2:193-219``:
CONNECTING while it retries, FAILED for a moment after each failed attempt,
``qd_connector.c@3.4.2:401``, SUCCESS once open) and ``connectionMsg`` its last failure as
skrouterd words it (``qd_connector.c@3.4.2:403-426``), which the router's management
answer here carries as a link's ``error``. Only the link connectors are answered (the
ones the management answer has), with those attributes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from skupper_sandbox import hostenv
from skupper_sandbox.router import choice as router_choice
from skupper_sandbox.router import seam

CONNECTOR_TYPES = ("connector", "io.skupper.router.connector")
TCP_CONNECTOR_TYPES = ("tcpConnector", "io.skupper.router.tcpConnector")
DEFAULT_PORT = 5672  # amqp


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="skmanage")
    p.add_argument("-b", "--bus", default="0.0.0.0")
    p.add_argument("-t", "--timeout", type=float, default=5.0)
    p.add_argument("--ssl-certificate")
    p.add_argument("--ssl-key")
    p.add_argument("--ssl-trustfile")
    p.add_argument("operation", choices=["query", "delete"])
    p.add_argument("--type", required=True)
    p.add_argument("--name")
    p.add_argument("attributes", nargs="*")
    return p


#: The management answer's link status as skrouterd's ``connectionStatus``.
CONNECTION_STATUS = {"up": "SUCCESS", "down": "FAILED", "connecting": "CONNECTING"}


def connector_entities(answer: dict[str, object]) -> list[dict[str, str]]:
    """The link connectors of the router's management answer as skmanage prints them."""
    links = answer.get("links")
    entities = []
    for link in links if isinstance(links, list) else []:
        if not isinstance(link, dict):
            continue
        entities.append(
            {
                "type": "io.skupper.router.connector",
                "name": str(link.get("name") or ""),
                "host": str(link.get("host") or ""),
                "port": str(link.get("port") or ""),
                "connectionStatus": CONNECTION_STATUS.get(str(link.get("status")), "CONNECTING"),
                "connectionMsg": str(link.get("error") or ""),
            }
        )
    return entities


def tcp_connector_entities(answer: dict[str, object]) -> list[dict[str, object]]:
    """The router's tcpConnectors as skmanage prints them (the attributes the management
    answer carries; ``bytesIn``/``bytesOut`` 0, as skrouterd sets them)."""
    connectors = answer.get("connectors")
    entities: list[dict[str, object]] = []
    for c in connectors if isinstance(connectors, list) else []:
        if not isinstance(c, dict):
            continue
        entities.append(
            {
                "type": "io.skupper.router.tcpConnector",
                "name": c.get("name"),
                "address": c.get("address"),
                "host": c.get("host"),
                "port": c.get("port"),
                "connectionsOpened": c.get("connectionsOpened"),
                "connectionsClosed": c.get("connectionsClosed"),
                "bytesIn": 0,
                "bytesOut": 0,
            }
        )
    return entities


def _only(entities: Sequence[Mapping[str, object]], names: list[str]) -> list[dict[str, object]]:
    """Each entity with only the attributes named (all when none is), as skmanage's
    ``query ATTR...``; an attribute without a value is left out (``get_dicts(clean=True)``)."""
    if not names:
        return [dict(e) for e in entities]
    return [{k: e[k] for k in names if e.get(k) is not None} for e in entities]


def _target(args: argparse.Namespace) -> tuple[seam.Router, str, int, Path | None]:
    """The router ``--bus`` names, as this host sees it: the world's router choice, the
    address and port to reach, and the folder of the ``--ssl-*`` files in the container."""
    url = urlsplit(args.bus if "//" in args.bus else f"amqp://{args.bus}")
    host = hostenv.current_host()
    address = hostenv.translate(url.hostname or "0.0.0.0", host)
    cert = Path(args.ssl_certificate) if args.ssl_certificate else None
    cert_dir = hostenv.container_path(str(cert.parent)) if cert else None
    return router_choice.for_world(host.world_dir), address, url.port or DEFAULT_PORT, cert_dir


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_intermixed_args(argv)  # optparse, as skmanage: operands anywhere
    if args.operation == "delete":
        return _delete(args)
    if args.type not in CONNECTOR_TYPES + TCP_CONNECTOR_TYPES:
        print(
            "NotImplementedStatus: the sandbox's skmanage queries connector and tcpConnector "
            f"only, not {args.type}",
            file=sys.stderr,
        )
        return 1
    router, address, port, cert_dir = _target(args)
    answer = router.query(address, port, cert_dir, args.timeout)
    if answer is None:
        print(
            f"ConnectionException: Connection {args.bus} disconnected: "
            "Condition('proton:io', 'Connection refused')",
            file=sys.stderr,
        )
        return 1
    if args.type in TCP_CONNECTOR_TYPES:
        print(json.dumps(_only(tcp_connector_entities(answer), args.attributes), indent=2))
    else:
        print(json.dumps(_only(connector_entities(answer), args.attributes), indent=2))
    return 0


def _delete(args: argparse.Namespace) -> int:
    if args.type not in TCP_CONNECTOR_TYPES or not args.name:
        print(
            "NotImplementedStatus: the sandbox's skmanage deletes a tcpConnector by --name only",
            file=sys.stderr,
        )
        return 1
    router, address, port, cert_dir = _target(args)
    error = router.delete(address, port, ("tcpConnector", args.name), cert_dir, args.timeout)
    if error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
