"""The router: link listeners and dialers, routing, tcpListeners, tcpConnectors, management."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skupper_sandbox.hostenv import HostInfo, container_path, translate
from skupper_sandbox.router import management
from skupper_sandbox.router.config import Connector, Listener, RouterConfig, TcpEndpoint
from skupper_sandbox.router.link import LinkSession, PeerHello
from skupper_sandbox.router.multiaddress import choose_address
from skupper_sandbox.router.protocol import (
    Frame,
    FrameType,
    ProtocolError,
    json_frame,
    read_frame,
)
from skupper_sandbox.router.release import link_state_hold, release_tag, unreachable_holdoff
from skupper_sandbox.router.routing import MAX_COST, Route, RouteTable
from skupper_sandbox.router.streams import Relay, StreamHandler, StreamKey, TcpBridge, pipe
from skupper_sandbox.router.tls import (
    HostnameMismatch,
    check_hostname,
    client_context,
    server_context,
)

log = logging.getLogger("skupper_sandbox.router")

# skrouterd logs per module (``<stamp> SERVER (error) ...``); the formatter prints this one.
SERVER, CONN_MGR, TCP_ADAPTOR = ({"skmodule": m} for m in ("SERVER", "CONN_MGR", "TCP_ADAPTOR"))
# The texts skrouterd 3.4.2 gives for the failures the sandbox meets (its README's facts).
VERIFY_FAILED = (
    "amqp:connection:framing-error SSL Failure: error:0A000086:SSL routines::"
    "certificate verify failed"
)
HANDSHAKE_FAILURE = (
    "amqp:connection:framing-error SSL Failure: error:0A000410:SSL routines::"
    "sslv3 alert handshake failure"
)
DECRYPT_ERROR = (
    "amqp:connection:framing-error SSL Failure: error:0A00041B:SSL routines::"
    "tlsv1 alert decrypt error"
)
INVALID_PADDING = (
    "amqp:connection:framing-error SSL Failure: error:0200008A:rsa routines::invalid padding"
)
#: A client that connected and closed before any TLS handshake (a TCP probe): proton's
#: transport error, logged at error level for an incoming connection
#: (src/adaptors/amqp/qd_connection.c@3.4.2 PN_TRANSPORT_ERROR; tests/router_logs).
UNEXPECTED_EOF = (
    "amqp:connection:framing-error SSL Failure: error:0A000126:SSL routines::"
    "unexpected eof while reading"
)
BACKLOG = 4096

LINK_ROLES = {"inter-router", "edge"}
TICK_SECONDS = 1.0
IDLE_TIMEOUT = 5.0
HANDSHAKE_TIMEOUT = 5.0
RETRY_FIRST, RETRY_MAX = 0.25, 5.0
#: How long a connector reads FAILED after a failed attempt (see ``_dial_forever``).
FAILED_SECONDS = 0.2


@dataclass
class LinkStatus:
    """A connector's (Link's) state as the management query reports it."""

    name: str
    host: str
    port: int
    # connecting | up | down (skrouterd: CONNECTING | SUCCESS | FAILED, the last briefly
    # after each failed attempt)
    status: str = "connecting"
    error: str | None = None
    remote_site: str | None = None


class Router:
    """One router process. ``run`` serves until the process is killed."""

    def __init__(
        self,
        config: RouterConfig,
        host: HostInfo,
        resolve: Callable[[str], Path] = container_path,
    ) -> None:
        self.config = config
        self.host = host
        self._resolve = resolve
        self.keys = RouteTable()
        self.sites = RouteTable()
        self.keys.set_local({c.address for c in config.tcp_connectors})
        self.sites.set_local({config.router.site_name})
        self.links: dict[str, LinkSession] = {}
        self.link_status = {c.name: LinkStatus(c.name, c.host, c.port) for c in config.connectors}
        self.accepted: dict[str, tuple[str, str]] = {}  # link name -> (listener, remote site)
        self._streams: dict[StreamKey, StreamHandler] = {}
        self._servers: dict[str, asyncio.Server] = {}  # "listener/<name>" or "tcp/<name>"
        self._bind_errors: dict[str, str] = {}
        self._accepted_count = 0
        self._connection_count = 0  # skrouterd's [C<n>] connection ids
        self._lost_at: dict[str, float] = {}
        self._lost_router: dict[str, str] = {}  # a lost link -> the router id it reached
        self._tasks: set[asyncio.Task[Any]] = set()
        self._listener_lock = asyncio.Lock()
        #: The open connections each local tcpConnector's address carries (its egress).
        self._egress: dict[str, set[TcpBridge]] = {}
        #: Each tcpConnector's ``connectionsOpened``/``connectionsClosed``, by name
        #: (``ConnectorCounts``), and the connector each connection to its server is counted on.
        self._counts = {c.name: ConnectorCounts() for c in config.tcp_connectors}
        self._counted: dict[TcpBridge | asyncio.StreamWriter, str] = {}
        #: Connections of a local tcpListener piped straight to a local tcpConnector's server
        #: (the client's side, and the server's once dialled), by address.
        self._local_pipes: dict[str, dict[asyncio.StreamWriter, asyncio.StreamWriter | None]] = {}

    # --- lifecycle ---------------------------------------------------------------------

    async def run(self) -> None:
        """Bind the listeners, dial the links, and keep routes and listeners current."""
        for connector in self.config.connectors:
            if connector.role in LINK_ROLES:
                self._spawn(self._dial_forever(connector))
        while True:
            self._expire_idle_links()
            self._advertise()  # also the links' heartbeat
            await self._bind_listeners()
            await self._refresh_tcp_listeners()
            await asyncio.sleep(TICK_SECONDS)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- listeners for links and management ---------------------------------------------

    async def _bind_listeners(self) -> None:
        for listener in self.config.listeners:
            key = f"listener/{listener.name}"
            if key in self._servers:
                continue
            if listener.role in LINK_ROLES:
                context = self._server_context(listener)
                if context is None:
                    continue

                def accept_link(
                    r: asyncio.StreamReader,
                    w: asyncio.StreamWriter,
                    listener: Listener = listener,
                    context: ssl.SSLContext = context,
                ) -> Awaitable[None]:
                    return self._accept_link(listener, context, r, w)

                await self._bind(key, listener.host, listener.port, accept_link)
            elif listener.role == "normal":

                async def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
                    await management.serve_query(
                        r, w, self.management_answer, self.management_delete
                    )

                await self._bind(key, listener.host, listener.port, serve)

    def _server_context(self, listener: Listener) -> ssl.SSLContext | None:
        profile = self.config.ssl_profiles.get(listener.ssl_profile or "")
        if profile is None:
            self._note_bind_error(
                f"listener/{listener.name}", "an inter-router listener needs an sslProfile"
            )
            return None
        return server_context(profile, self._resolve)

    async def _bind(
        self,
        name: str,
        host: str,
        port: int,
        handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
    ) -> bool:
        address = translate(host, self.host)
        try:
            self._servers[name] = await asyncio.start_server(handler, address, port)
        except OSError as exc:
            self._note_bind_error(name, f"cannot listen on {address}:{port}: {exc.strerror}")
            return False
        self._bind_errors.pop(name, None)
        if name.startswith("tcp/"):
            log.info(
                "Listener %s: listening for client connections on %s:%s with backlog %d",
                name[4:],
                address,
                port,
                BACKLOG,
                extra=TCP_ADAPTOR,
            )
        else:
            shown = "amqp" if port == 5672 else port  # the image's default config says "amqp"
            log.info("Listening on %s:%s", address, shown, extra=SERVER)
        return True

    def _connection_id(self) -> str:
        self._connection_count += 1
        return f"C{self._connection_count}"

    def _note_bind_error(self, name: str, message: str) -> None:
        if self._bind_errors.get(name) != message:
            self._bind_errors[name] = message
            log.error("Listener %s: %s", name, message, extra=SERVER)

    # --- links ---------------------------------------------------------------------------

    async def _dial_forever(self, connector: Connector) -> None:
        status = self.link_status[connector.name]
        delay = RETRY_FIRST
        while True:
            try:
                link = await self._dial(connector)
            except Exception as exc:  # any failure is a failed attempt; never stop dialling
                # skrouterd: the connector stays CONNECTING, its connectionMsg the last failure,
                # logged only when that message changes (qd_connector.c@3.4.2:416-431; an
                # open connection sets it to "Connection Opened", amqp_adaptor.c:1631)
                reason = _dial_failure(exc, connector)
                if reason != status.error:
                    log.error("[%s] %s", self._connection_id(), reason, extra=SERVER)
                # FAILED from the transport error until the connection is freed, then
                # CONNECTING until the retry (qd_connector.c@3.4.2:401, :531). **Adapted**:
                # held FAILED_SECONDS, so that a query can see it, where skrouterd's is a
                # moment of its I/O thread
                status.status, status.error = "down", reason
                await asyncio.sleep(min(FAILED_SECONDS, delay))
                status.status = "connecting"
                await asyncio.sleep(max(0.0, delay - FAILED_SECONDS))
                delay = min(delay * 2, RETRY_MAX)
                continue
            delay = RETRY_FIRST
            status.status, status.error, status.remote_site = "up", None, link.peer.site
            log.info(
                "[%s] Connection to %s:%s (inter-router) opened, peer %s",
                self._connection_id(),
                connector.host,
                connector.port,
                link.peer.router_id,
                extra=SERVER,
            )
            reason = await self._run_link(link)
            status.status = "connecting"
            status.error = f"Connection to {connector.host}:{connector.port} failed: {reason}"
            log.error("%s", status.error, extra=SERVER)
            await asyncio.sleep(0.1)

    async def _dial(self, connector: Connector) -> LinkSession:
        profile = self.config.ssl_profiles.get(connector.ssl_profile or "")
        context = client_context(profile, self._resolve) if profile else None
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(
                translate(connector.host, self.host),
                connector.port,
                ssl=context,
                server_hostname=connector.host if context else None,
                local_addr=(self.host.address, 0),
                ssl_handshake_timeout=HANDSHAKE_TIMEOUT if context else None,
            ),
            timeout=HANDSHAKE_TIMEOUT,
        )
        try:
            if context is not None and connector.verify_hostname:
                ssl_object = writer.get_extra_info("ssl_object")
                check_hostname(connector.host, ssl_object.getpeercert(binary_form=True))
            writer.write(json_frame(FrameType.HELLO, self._hello(connector.cost)).encode())
            peer, _ = await self._read_hello(reader)
        except BaseException:
            writer.transport.abort()
            raise
        return LinkSession(
            f"link/{connector.name}",
            reader,
            writer,
            peer=peer,
            cost=connector.cost,
            dialled=True,
        )

    async def _accept_link(
        self,
        listener: Listener,
        context: ssl.SSLContext,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        peer_address = writer.get_extra_info("peername")
        secured = False
        try:
            await writer.start_tls(context, ssl_handshake_timeout=HANDSHAKE_TIMEOUT)
            secured = True
            peer, cost = await self._read_hello(reader)
            writer.write(json_frame(FrameType.HELLO, self._hello(cost)).encode())
        except (OSError, ssl.SSLError, ProtocolError, TimeoutError) as exc:
            log.error(
                "[%s] Connection from %s (to %s:%s) failed: %s",
                self._connection_id(),
                _peer(peer_address),
                translate(listener.host, self.host),
                listener.port,
                _accept_failure(exc, secured),
                extra=SERVER,
            )
            writer.transport.abort()
            return
        self._accepted_count += 1
        link = LinkSession(
            f"accepted/{listener.name}/{self._accepted_count}",
            reader,
            writer,
            peer=peer,
            cost=cost,
            dialled=False,
        )
        self.accepted[link.name] = (listener.name, peer.site)
        log.info(
            "[%s] Accepted connection to %s:%s from %s (inter-router, site %s)",
            self._connection_id(),
            translate(listener.host, self.host),
            listener.port,
            _peer(peer_address),
            peer.site,
            extra=SERVER,
        )
        try:
            reason = await self._run_link(link)
        finally:
            self.accepted.pop(link.name, None)
        log.info(
            "Connection from site %s on %s closed: %s",
            peer.site,
            listener.name,
            reason,
            extra=SERVER,
        )

    def _hello(self, cost: int) -> dict[str, Any]:
        identity = self.config.router
        return {
            "id": identity.id,
            "site": identity.site_name,
            "siteId": identity.site_id,
            "cost": cost,
        }

    async def _read_hello(self, reader: asyncio.StreamReader) -> tuple[PeerHello, int]:
        frame = await asyncio.wait_for(read_frame(reader), HANDSHAKE_TIMEOUT)
        if frame is None:
            raise ConnectionResetError(
                "connection closed by peer during the link handshake"
                " (it may have refused this router's client certificate)"
            )
        if frame.type is not FrameType.HELLO:
            raise ProtocolError(f"expected HELLO, got {frame.type.name}")
        body = frame.json()
        peer = PeerHello(
            str(body.get("id", "")), str(body.get("site", "")), str(body.get("siteId", ""))
        )
        cost = body.get("cost", 1)
        return peer, cost if isinstance(cost, int) and cost > 0 else 1

    async def _run_link(self, link: LinkSession) -> str:
        """Serve a link until it closes; return why it closed."""
        self.links[link.name] = link
        reason = "closed by peer"
        try:
            if self._forget_earlier_links_of(link.peer.router_id):
                await self._routes_changed()
            else:
                self._send_routes(link)
            while True:
                frame = await read_frame(link.reader)
                if frame is None:
                    break
                link.last_heard = time.monotonic()
                await self._on_frame(link, frame)
        except (OSError, ssl.SSLError, ProtocolError, asyncio.IncompleteReadError) as exc:
            reason = _describe(exc)
        finally:
            if link.idle_expired:
                reason = f"no traffic for {IDLE_TIMEOUT:g}s"
            del self.links[link.name]
            link.abort()
            for key, handler in list(self._streams.items()):
                if key[0] is link:
                    handler.link_lost(link)
            # skrouterd 3.4 keeps a lost router's link state, and so the addresses behind
            # it (a remote tcpListener stays bound), until remoteLsMaxAgeSeconds pass;
            # 3.5 drops them unreachableHoldoffSeconds after (router.release).
            lost_at = time.monotonic()
            self._lost_at[link.name] = lost_at
            self._lost_router[link.name] = link.peer.router_id
            self._spawn(self._expire_routes(link.name, lost_at, lost_at - link.up_at))
            # ...but only here: the neighbours hear at once that the lost router is no longer
            # reachable through this one (a router's changed link state goes out on its next
            # one-second tick, node.py@3.4.2 tick), so a held route never keeps their
            # listeners bound for this router's hold.
            self._advertise()
        return reason

    def _forget_earlier_links_of(self, router_id: str) -> bool:
        """A router that links again replaces what it said over its lost link: skrouterd
        keeps link state by router id, not by connection (its new link state supersedes the
        old), so the old link's routes go now, not when they age out. True when any went."""
        changed = False
        for name, lost_id in list(self._lost_router.items()):
            if router_id and lost_id == router_id and name not in self.links:
                self._lost_router.pop(name)
                self._lost_at.pop(name, None)
                changed |= self.keys.forget(name) | self.sites.forget(name)
        return changed

    async def _expire_routes(self, name: str, lost_at: float, linked_for: float) -> None:
        identity = self.config.router
        holdoff = unreachable_holdoff(release_tag(os.environ), identity.unreachable_holdoff)
        if holdoff is None:  # 3.4.x: max age after the last advertisement, 30-63 s
            holdoff = link_state_hold(identity.remote_ls_max_age, linked_for)
        await asyncio.sleep(holdoff)
        if name in self.links or self._lost_at.get(name) != lost_at:
            return  # the link is back (or was lost again later)
        self._lost_at.pop(name, None)
        self._lost_router.pop(name, None)
        if self.keys.forget(name) | self.sites.forget(name):
            await self._routes_changed()

    def _expire_idle_links(self) -> None:
        now = time.monotonic()
        for link in list(self.links.values()):
            if now - link.last_heard > IDLE_TIMEOUT:
                link.idle_expired = True
                link.abort()

    # --- routing -------------------------------------------------------------------------

    async def _on_frame(self, link: LinkSession, frame: Frame) -> None:
        if frame.type is FrameType.ROUTES:
            body = frame.json()
            changed = self.keys.learn(link.name, _costs(body.get("keys")), link.cost)
            changed |= self.sites.learn(link.name, _costs(body.get("sites")), 1)
            if changed:
                await self._routes_changed()
        elif frame.type is FrameType.OPEN:
            await self._on_open(link, frame)
        elif frame.type is not FrameType.HELLO:
            handler = self._streams.get((link, frame.stream))
            if handler is not None:
                await handler.handle(link, frame)

    async def _routes_changed(self) -> None:
        self._advertise()
        await self._refresh_tcp_listeners()

    def _advertise(self) -> None:
        for link in list(self.links.values()):
            with contextlib.suppress(OSError):
                self._send_routes(link)

    def _send_routes(self, link: LinkSession) -> None:
        body = {
            "keys": self.keys.advertisement_for(link.name, alive=self.links),
            "sites": self.sites.advertisement_for(link.name, alive=self.links),
        }
        link.send_nowait(json_frame(FrameType.ROUTES, body))

    # --- streams -------------------------------------------------------------------------

    def _forget_stream(self, key: StreamKey) -> None:
        handler = self._streams.pop(key, None)
        if isinstance(handler, TcpBridge):
            for bridges in self._egress.values():
                bridges.discard(handler)
            self._count_closed(handler)

    def _count_opened(self, address: str, connection: TcpBridge | asyncio.StreamWriter) -> None:
        """A connection to ``address``'s server: counted on the tcpConnector that dials it
        (``_dial_target``'s), as skrouterd counts it when the stream arrives, before the
        connect (``tcp_adaptor.c@3.5.1:1310``)."""
        target = next((c for c in self.config.tcp_connectors if c.address == address), None)
        if target is not None:
            self._counts.setdefault(target.name, ConnectorCounts()).opened += 1
            self._counted[connection] = target.name

    def _count_closed(self, connection: TcpBridge | asyncio.StreamWriter) -> None:
        """The connection ended, however (``close_connection_XSIDE_IO``, ``@3.5.1:586``)."""
        name = self._counted.pop(connection, None)
        if name is not None and name in self._counts:
            self._counts[name].closed += 1

    async def _on_open(self, link: LinkSession, frame: Frame) -> None:
        body = frame.json()
        address = str(body.get("address", ""))
        ttl = body.get("ttl", 0)
        route = self.keys.best(address, excluding=link.name, alive=self.links)
        if route is None or not isinstance(ttl, int) or ttl <= 0:
            reason = f"no route to {address}".encode()
            await link.send(Frame(FrameType.CLOSE, frame.stream, reason))
            return
        if route.via is not None and route.via not in self.links:
            await link.send(Frame(FrameType.CLOSE, frame.stream, f"{address} is gone".encode()))
            return
        if route.via is None:
            bridge = TcpBridge(link, frame.stream, self._forget_stream)
            self._streams[bridge.key] = bridge
            self._egress.setdefault(address, set()).add(bridge)
            self._count_opened(address, bridge)
            self._spawn(self._connect_bridge(bridge, address))
            return
        out = self.links[route.via]
        out_key = (out, out.new_stream_id())
        relay = Relay((link, frame.stream), out_key, self._forget_stream)
        self._streams[(link, frame.stream)] = relay
        self._streams[out_key] = relay
        opening = json_frame(FrameType.OPEN, {"address": address, "ttl": ttl - 1}, out_key[1])
        try:
            await out.send(opening)
        except OSError:
            relay.link_lost(out)

    async def _connect_bridge(self, bridge: TcpBridge, address: str) -> None:
        try:
            reader, writer = await self._dial_target(address)
        except OSError as exc:
            log.error("tcpConnector for %s: %s", address, _describe(exc), extra=TCP_ADAPTOR)
            bridge.abort(notify_peer=True, reason=_describe(exc))
            return
        bridge.attach(reader, writer)

    async def _dial_target(self, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        target = next(c for c in self.config.tcp_connectors if c.address == address)
        return await asyncio.wait_for(
            asyncio.open_connection(
                translate(target.host, self.host),
                target.port,
                local_addr=(self.host.address, 0),
            ),
            timeout=HANDSHAKE_TIMEOUT,
        )

    # --- tcpListeners --------------------------------------------------------------------

    async def _refresh_tcp_listeners(self) -> None:
        async with self._listener_lock:  # a route change and the tick may both get here
            await self._bind_or_unbind_tcp_listeners()

    async def _bind_or_unbind_tcp_listeners(self) -> None:
        for endpoint in self.config.tcp_listeners:
            key = f"tcp/{endpoint.name}"
            reachable = any(self.keys.best(k) is not None for k in endpoint.routing_keys())
            server = self._servers.get(key)
            if reachable and server is None:

                def accept(
                    r: asyncio.StreamReader,
                    w: asyncio.StreamWriter,
                    endpoint: TcpEndpoint = endpoint,
                ) -> Awaitable[None]:
                    return self._accept_tcp(endpoint, r, w)

                await self._bind(key, endpoint.host, endpoint.port, accept)
            elif not reachable and server is not None:
                server.close()
                del self._servers[key]
                log.info(
                    "Listener %s: stopped listening for client connections on %s:%s",
                    endpoint.name,
                    translate(endpoint.host, self.host),
                    endpoint.port,
                    extra=TCP_ADAPTOR,
                )

    async def _accept_tcp(
        self, endpoint: TcpEndpoint, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        address = choose_address(endpoint, self._reachable_now)
        route = self._balanced(address) if address is not None else None
        if address is None or route is None:
            writer.transport.abort()
            return
        if route.via is None:
            await self._pipe_local(address, reader, writer)
            return
        link = self.links.get(route.via)
        if link is None:  # a lost router's address, not yet expired: nothing answers
            writer.transport.abort()
            return
        bridge = TcpBridge(link, link.new_stream_id(), self._forget_stream)
        self._streams[bridge.key] = bridge
        opening = {"address": address, "ttl": MAX_COST}
        try:
            await link.send(json_frame(FrameType.OPEN, opening, bridge.stream_id))
        except OSError:
            bridge.abort(notify_peer=False)
            writer.transport.abort()
            return
        bridge.attach(reader, writer)

    async def _pipe_local(
        self, address: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """A local tcpListener's connection to a local tcpConnector's server: counted on the
        connector and closed with it, as one that came over a link."""
        self._count_opened(address, writer)
        pipes = self._local_pipes.setdefault(address, {})
        pipes[writer] = None
        try:
            try:
                target = await self._dial_target(address)
            except OSError:
                writer.transport.abort()
                return
            pipes[writer] = target[1]
            await pipe((reader, writer), target)
        finally:
            pipes.pop(writer, None)
            self._count_closed(writer)

    def _reachable_now(self, key: str) -> bool:
        """Whether a live route to ``key`` is known: a MultiKeyListener's address counts as
        reachable only then (adaptor_listener.c@3.5.1:160-190)."""
        return self.keys.best(key, alive=self.links) is not None

    def _balanced(self, key: str) -> Route | None:
        """Where a new connection to ``key`` goes: a local connector, else the live peer of
        least cost plus connections open through it (``qdr_forward_balanced_CT``,
        src/router_core/forwarder.c@3.5.1:894-1030: outstanding deliveries plus the node's
        cost; a router with no data link is skipped)."""
        best = self.keys.best(key, alive=self.links)
        if best is None or best.via is None:
            return best
        candidates = self.keys.routes(key, alive=self.links)
        # the candidates are destinations, each over its own least-cost path: a peer that
        # serves the key itself (it advertised cost 0), never a peer that would only pass
        # the connection on to a destination this router reaches by its own link (the real
        # forwarder balances over the address's remote routers, each through its next hop)
        serving = [r for r in candidates if r.via and r.cost == self.links[r.via].cost]
        candidates = serving or candidates
        if not candidates:
            return best  # only a lost peer's route: it fails as before
        open_via: dict[str, int] = {}
        for stream in self._streams.values():
            if isinstance(stream, TcpBridge):
                open_via[stream.link.name] = open_via.get(stream.link.name, 0) + 1
        return min(candidates, key=lambda r: (r.cost + open_via.get(r.via or "", 0), r.via or ""))

    # --- management ----------------------------------------------------------------------

    def management_delete(self, entity_type: str, name: str) -> dict[str, Any]:
        """Delete a tcpConnector, as skrouterd's management DELETE does
        (``qd_dispatch_delete_tcp_connector``, ``src/adaptors/tcp/tcp_adaptor.c@3.5.1:
        2610-2650``): its out-link closes, so the address has no local destination and its
        withdrawal reaches the other routers on the mobile-address sync's next one-second
        tick (``src/router_core/modules/mobile_sync/mobile.c@3.5.1:451-470,940-957``, the
        same ``@3.4.2``), with no hold; its open connections are closed
        (``dropTcpConnections``, default true and not set by Skupper). Here the withdrawal
        is advertised at once."""
        if entity_type not in ("tcpConnector", "io.skupper.router.tcpConnector"):
            return {"error": "NotImplementedStatus: the sandbox deletes tcpConnector only"}
        kept = [c for c in self.config.tcp_connectors if c.name != name]
        if len(kept) == len(self.config.tcp_connectors):
            return {"error": f"NotFoundStatus: No entity with name='{name}'"}
        gone = {c.address for c in self.config.tcp_connectors if c.name == name}
        self._counts.pop(name, None)
        self.config = dataclasses.replace(self.config, tcp_connectors=kept)
        addresses = {c.address for c in kept}
        self.keys.set_local(addresses)
        for address in gone - addresses:
            for bridge in list(self._egress.pop(address, set())):
                bridge.abort(notify_peer=True, reason="Parent-deleted")
            for client, server in list(self._local_pipes.pop(address, {}).items()):
                for side in (client, server):
                    if side is not None:
                        side.transport.abort()
            log.info("Deleted TcpConnector for %s", address, extra=TCP_ADAPTOR)
        self._spawn(self._routes_changed())
        return {}

    def management_answer(self) -> dict[str, Any]:
        """The management query's answer (docs/sandbox.md section 10)."""
        identity = self.config.router
        return {
            "router": {"id": identity.id, "site": identity.site_name, "siteId": identity.site_id},
            "links": [
                {
                    "name": s.name,
                    "host": s.host,
                    "port": str(s.port),
                    "status": s.status,
                    "error": s.error,
                    "remoteSite": s.remote_site,
                }
                for s in self.link_status.values()
            ],
            "accepted": [
                {"listener": listener, "remoteSite": site}
                for listener, site in self.accepted.values()
            ],
            "listeners": [
                {
                    "name": t.name,
                    "address": t.address,
                    "host": translate(t.host, self.host),
                    "port": str(t.port),
                    "bound": f"tcp/{t.name}" in self._servers,
                }
                for t in self.config.tcp_listeners
            ],
            "connectors": [
                {
                    "name": t.name,
                    "address": t.address,
                    "host": translate(t.host, self.host),
                    "port": str(t.port),
                    "connectionsOpened": self._counts.setdefault(t.name, ConnectorCounts()).opened,
                    "connectionsClosed": self._counts[t.name].closed,
                }
                for t in self.config.tcp_connectors
            ],
            "reachable": self.keys.reachable(),
            "sites": sorted(self.sites.keys()),
        }


@dataclasses.dataclass
class ConnectorCounts:
    """A tcpConnector's ``connectionsOpened`` and ``connectionsClosed`` as skrouterd's
    management reports them (``qd_entity_refresh_tcpConnector``,
    ``src/adaptors/tcp/tcp_adaptor.c@3.5.1:2747-2765``, ``@3.4.2:2627-2645``): opened starts
    at 1, the connector's own egress-dispatch connection, which never closes
    (``TL_setup_connector``, ``@3.5.1:401-409``); each connection to its server adds one to
    opened when its stream arrives and one to closed when it ends."""

    opened: int = 1
    closed: int = 0


def _costs(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and v >= 0}


def _describe(exc: BaseException) -> str:
    """A one-line reason for a failed link or connection, as the management answer shows it."""
    if isinstance(exc, TimeoutError):
        return "connection timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {exc.verify_message}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno)  # asyncio's strerror is "Connect call failed (...)"
    return str(exc) or type(exc).__name__


def _dial_failure(exc: BaseException, connector: Connector) -> str:
    """skrouterd's ``connectionMsg`` for a failed dial (client side)."""
    where = f"{connector.host}:{connector.port}"
    if isinstance(exc, HostnameMismatch | ssl.SSLCertVerificationError):
        detail = VERIFY_FAILED
    elif isinstance(exc, ssl.SSLError | ConnectionResetError):
        # the hub refused this router's client certificate (another site's CA)
        detail = DECRYPT_ERROR
    elif isinstance(exc, ConnectionRefusedError):
        detail = f"proton:io Connection refused - disconnected {where}"
    elif isinstance(exc, TimeoutError):
        detail = f"proton:io Connection timed out - disconnected {where}"
    else:
        detail = f"proton:io {_describe(exc)} - disconnected {where}"
    return f"Connection to {where} failed: {detail}"


def _accept_failure(exc: BaseException, secured: bool) -> str:
    """skrouterd's text for an inbound link that failed (server side). ``secured``: our side
    of the TLS handshake ended; a client that refuses our certificate leaves after that."""
    if not secured and isinstance(exc, (ConnectionResetError, ssl.SSLEOFError)):
        return UNEXPECTED_EOF  # closed before the handshake (a TCP probe): no alert sent
    if isinstance(exc, ssl.SSLCertVerificationError) or (
        isinstance(exc, ssl.SSLError) and "CERTIFICATE_VERIFY_FAILED" in str(exc)
    ):
        return INVALID_PADDING  # a client certificate from another site's CA
    return HANDSHAKE_FAILURE  # the client gave up on our certificate (name not in its SANs)


def _peer(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)
