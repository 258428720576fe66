"""AMQP management queries to a real skrouterd, as Skupper's controllers make them.

Skupper's Go code (``internal/qdr/amqp_mgmt.go`` at 2.1.x) sends a request message to
``$management`` with the application properties ``operation=QUERY``,
``type=org.amqp.management``, ``entityType=<type>``, ``name=self`` and a body
``{"attributeNames": [...]}``, and reads ``{"attributeNames": [...], "results": [[...]]}``
from its reply address. The system-controller connects to ``amqps://127.0.0.1:<port>`` with
the site's ``skupper-local-client`` certificate (SASL EXTERNAL); the ``skupper-local-server``
certificate names only ``localhost`` and ``127.0.0.1``, so a client dialling the host's own
address in the sandbox checks the CA but not the name.

``state`` turns the entities into the same answer the imitation gives (docs/sandbox.md
section 10), so every consumer reads one shape whichever router runs.
"""

from __future__ import annotations

import contextlib
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANAGEMENT = "$management"
PREFIX = "io.skupper.router."
LINK_ROLES = ("inter-router", "edge")


class ManagementError(RuntimeError):
    """The router could not be reached or refused the request."""


@dataclass(frozen=True)
class ClientCert:
    """A ``kubernetes.io/tls``-style directory: ``ca.crt``, ``tls.crt``, ``tls.key``."""

    directory: Path

    def exists(self) -> bool:
        return all((self.directory / f).is_file() for f in ("ca.crt", "tls.crt", "tls.key"))


#: Each client certificate's TLS context, by its directory, with what its files were when
#: it was made: a connection made again (the router restarted, or was still starting) takes
#: the same one until the files change.
_domains: dict[Path, tuple[tuple[tuple[int, int, int], ...], Any]] = {}


def _client_domain(cert: ClientCert) -> Any:
    """The TLS context that checks the router against the CA and presents the client's
    certificate. Proton makes each one from the system's CA bundle first (about 30 ms of
    CPU, where Skupper's Go client only parses the CA it is given)."""
    from proton import SSLDomain

    files = [cert.directory / name for name in ("ca.crt", "tls.crt", "tls.key")]
    stats = [f.stat() for f in files]
    signature = tuple((s.st_ino, s.st_mtime_ns, s.st_size) for s in stats)
    known = _domains.get(cert.directory)
    if known is not None and known[0] == signature:
        return known[1]
    domain = SSLDomain(SSLDomain.MODE_CLIENT)
    domain.set_trusted_ca_db(str(files[0]))
    domain.set_peer_authentication(SSLDomain.VERIFY_PEER)
    domain.set_credentials(str(files[1]), str(files[2]), None)
    _domains[cert.directory] = (signature, domain)
    return domain


def _defer_default_tls() -> None:
    """Have proton's Container make its default TLS contexts when a connection first uses
    them, not whenever a Container is made: BlockingConnection makes one per connection, and
    its client and server contexts (from the system's CA bundle, about 30 ms of CPU each)
    serve only connections that bring no domain of their own, which none here does over
    TLS. What they are, once used, is unchanged."""
    import proton._reactor as reactor

    if getattr(reactor.SSLConfig, "deferred", False):
        return

    class DeferredSSLConfig(reactor.SSLConfig):
        deferred = True

        def __init__(self) -> None:  # the contexts come with their first use
            pass

        @functools.cached_property
        def client(self) -> Any:  # type: ignore[override]
            return reactor.SSLDomain(reactor.SSLDomain.MODE_CLIENT)

        @functools.cached_property
        def server(self) -> Any:  # type: ignore[override]
            return reactor.SSLDomain(reactor.SSLDomain.MODE_SERVER)

    reactor.SSLConfig = DeferredSSLConfig  # type: ignore[misc]


class Management:
    """One AMQP connection to a router's management agent (and, through it, to the agents of
    the other routers in its network: ``amqp:/_topo/0/<router id>/$management``)."""

    def __init__(
        self, address: str, port: int, cert: ClientCert | None = None, timeout: float = 2.0
    ) -> None:
        from proton.utils import BlockingConnection, SyncRequestResponse

        _defer_default_tls()
        ssl_domain = None
        scheme = "amqp"
        kwargs: dict[str, Any] = {}
        try:
            if cert is not None:
                scheme = "amqps"
                ssl_domain = _client_domain(cert)
                kwargs = {"sasl_enabled": True, "allowed_mechs": "EXTERNAL"}
            self._connection = BlockingConnection(
                f"{scheme}://{address}:{port}", timeout=timeout, ssl_domain=ssl_domain, **kwargs
            )
            # An anonymous sender (each request names its address) and a dynamic reply queue.
            self._client = SyncRequestResponse(self._connection, None)
        except Exception as exc:  # proton raises several unrelated types
            self.close()
            raise ManagementError(f"cannot reach the router at {address}:{port}: {exc}") from exc

    def keep_alive(self) -> None:
        """Let the connection send what it owes without a request: between requests nothing
        runs its I/O, and the router drops a connection idle past its listener's timeout
        (16 s by default) with ``amqp:resource-limit-exceeded local-idle-timeout expired``."""
        from proton import Timeout

        try:  # a first pass only queues the reactor's quiesce; the select and tick follow
            self._connection.wait(lambda: False, timeout=0.05)
        except Timeout:
            pass
        except Exception as exc:  # proton raises several unrelated types
            raise ManagementError(f"keeping the connection: {exc}") from exc

    def close(self) -> None:
        connection = getattr(self, "_connection", None)
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()

    def __enter__(self) -> Management:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def delete(self, entity_type: str, name: str) -> None:
        """Delete one entity of a type by name; raises ``ManagementError`` when refused."""
        _delete(self, entity_type, name)

    def query(
        self, entity_type: str, attributes: list[str] | None = None, router_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Every entity of a type (``connector``, ``tcpListener``...), as dicts."""
        from proton import Message

        address = f"_topo/0/{router_id}/{MANAGEMENT}" if router_id else MANAGEMENT
        request = Message(
            address=address,
            properties={
                "operation": "QUERY",
                "type": "org.amqp.management",
                "entityType": PREFIX + entity_type,
                "name": "self",
            },
            body={"attributeNames": attributes or []},
        )
        try:
            reply = self._client.call(request)
        except Exception as exc:
            raise ManagementError(f"query {entity_type}: {exc}") from exc
        properties: dict[str, Any] = dict(reply.properties or {})
        status = properties.get("statusCode")
        if status != 200:
            described = properties.get("statusDescription")
            raise ManagementError(f"query {entity_type}: {status} {described}")
        body: Any = reply.body if isinstance(reply.body, dict) else {}
        names = body.get("attributeNames") or []
        return [dict(zip(names, row, strict=False)) for row in body.get("results") or []]


def _delete(management: Management, entity_type: str, name: str) -> None:
    """The management DELETE of one entity by name (AMQP management: ``operation`` DELETE,
    ``type`` the entity's full type, ``name``; 204 No Content when done)."""
    from proton import Message

    request = Message(
        address=MANAGEMENT,
        properties={"operation": "DELETE", "type": PREFIX + entity_type, "name": name},
        body={},
    )
    try:
        reply = management._client.call(request)
    except Exception as exc:  # proton raises several unrelated types
        raise ManagementError(f"delete {entity_type} {name}: {exc}") from exc
    properties: dict[str, Any] = dict(reply.properties or {})
    if properties.get("statusCode") not in (200, 204):
        described = properties.get("statusDescription")
        raise ManagementError(f"{properties.get('statusCode')} {described}")


def _metadata(router: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(router.get("metadata") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


_site_cache: dict[str, dict[str, Any]] = {}


def _remote_site(management: Management, router_id: str) -> dict[str, Any]:
    """The site metadata of another router in the network, from its own agent (cached: a
    router id changes whenever its site is rendered again)."""
    if router_id not in _site_cache:
        if len(_site_cache) > 256:  # ids of routers rendered long ago
            _site_cache.clear()
        routers = management.query("router", ["id", "metadata"], router_id=router_id)
        _site_cache[router_id] = _metadata(routers[0]) if routers else {}
    return _site_cache[router_id]


def _link_status(connector: dict[str, Any], connected: bool) -> str:
    status = str(connector.get("connectionStatus") or "")
    if status == "SUCCESS" and connected:
        return "up"
    if status == "FAILED":
        return "down"
    return "connecting"


def state(management: Management) -> dict[str, Any]:
    """The router's live state in the shape of the imitation's management answer.

    links: the ``connector`` entities of a link role, ``up`` when ``connectionStatus`` is
    SUCCESS, an opened inter-router connection to its host:port exists and the peer router's
    agent has named its site, with
    ``connectionMsg`` as the error; accepted: opened inbound inter-router connections;
    listeners: ``tcpListener`` with ``operStatus == "up"`` as bound; reachable: the mobile
    addresses (``router.address`` ``M<key>``) with a local subscriber (cost 0) or remote ones
    (the least ``router.node`` cost of its ``remoteHostRouters``); sites: the
    site names in this router's and the other routers' ``router.metadata``.
    """
    router = (management.query("router", ["id", "metadata"]) or [{}])[0]
    own = _metadata(router)
    connections = management.query(
        "connection", ["role", "dir", "host", "container", "opened", "operStatus"]
    )
    link_connections = [
        c for c in connections if c.get("role") in LINK_ROLES and c.get("opened") is not False
    ]
    out_by_host = {str(c.get("host")): c for c in link_connections if c.get("dir") == "out"}
    links = []
    for connector in management.query(
        "connector", ["name", "role", "host", "port", "connectionStatus", "connectionMsg"]
    ):
        if connector.get("role") not in LINK_ROLES:
            continue
        connection = out_by_host.get(f"{connector.get('host')}:{connector.get('port')}")
        status = _link_status(connector, connection is not None)
        remote = None
        if status == "up" and connection is not None and connection.get("container"):
            with contextlib.suppress(ManagementError):
                remote = _remote_site(management, str(connection["container"])).get("name")
            if not remote:
                # as Skupper's collector: the link counts once its peer's site is known
                # (the peer's agent answers a second or so after the connection opens)
                status = "connecting"
        message = str(connector.get("connectionMsg") or "")
        links.append(
            {
                "name": connector.get("name"),
                "host": connector.get("host"),
                "port": str(connector.get("port")),
                "status": status,
                "error": message if status != "up" and message else None,
                "remoteSite": remote,
            }
        )
    accepted = []
    for connection in link_connections:
        if connection.get("dir") != "in":
            continue
        site = None
        with contextlib.suppress(ManagementError):
            site = _remote_site(management, str(connection.get("container"))).get("name")
        accepted.append({"listener": None, "remoteSite": site})
    listeners = [
        {
            "name": t.get("name"),
            "address": t.get("address"),
            "host": t.get("host"),
            "port": str(t.get("port")),
            "bound": t.get("operStatus") == "up",
        }
        for t in management.query("tcpListener", ["name", "address", "host", "port", "operStatus"])
    ]
    connectors = [
        {
            "name": t.get("name"),
            "address": t.get("address"),
            "host": t.get("host"),
            "port": str(t.get("port")),
            "connectionsOpened": t.get("connectionsOpened"),
            "connectionsClosed": t.get("connectionsClosed"),
        }
        for t in management.query(
            "tcpConnector",
            ["name", "address", "host", "port", "connectionsOpened", "connectionsClosed"],
        )
    ]
    nodes = management.query("router.node", ["id", "cost"])
    costs = {str(n.get("id")): int(n.get("cost") or 0) for n in nodes if n.get("cost") is not None}
    reachable: dict[str, int] = {}
    for address in management.query(
        "router.address",
        ["key", "distribution", "subscriberCount", "containerCount", "remoteHostRouters"],
    ):
        # The TCP adaptor's routing keys are mobile (``M``) balanced addresses; the router's
        # own (``_$qd.*``) and the flow collector's (``sfe.*``, ``vfcr.*``) are not services.
        key = str(address.get("key") or "")
        if (
            not key.startswith("M")
            or key.startswith("M_$")
            or address.get("distribution") != "balanced"
        ):
            continue
        if int(address.get("subscriberCount") or 0) + int(address.get("containerCount") or 0):
            reachable[key[1:]] = 0
            continue
        remote = [costs[r] for r in address.get("remoteHostRouters") or [] if r in costs]
        if remote:
            reachable[key[1:]] = min(remote)
    sites = {str(own["name"])} if own.get("name") else set()
    for node in nodes:
        node_id = str(node.get("id") or "")
        if node_id and node_id != router.get("id"):
            with contextlib.suppress(ManagementError):
                name = _remote_site(management, node_id).get("name")
                if name:
                    sites.add(str(name))
    return {
        "router": {"id": router.get("id"), "site": own.get("name"), "siteId": own.get("id")},
        "links": links,
        "accepted": accepted,
        "listeners": listeners,
        "connectors": connectors,
        "reachable": reachable,
        "sites": sorted(sites),
    }


def query_state(
    address: str, port: int, cert: ClientCert | None = None, timeout: float = 2.0
) -> dict[str, Any] | None:
    """The router's state, or None when it does not answer (not running, not listening,
    or refusing the client certificate)."""
    try:
        with Management(address, port, cert, timeout) as management:
            return state(management)
    except ManagementError:
        return None
