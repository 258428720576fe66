"""The sandbox router as real processes: links over mutual TLS, routing, TCP streams."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

import polling
from hostkit import router_kinds, start_model_server, write_host
from skupper_sandbox import certs, hostenv
from skupper_sandbox.netprobe import port_open
from skupper_sandbox.router import amqp_management, choice, entities
from skupper_sandbox.router.release import RELEASE_VAR

T = TypeVar("T")

#: A real router takes its time to start, link and learn routes: 20 s, not the default 10.
wait_for = functools.partial(polling.wait_for, timeout=20.0)

CONTAINER_CONFIG = "/etc/skupper-router/config"
CONTAINER_CERTS = "/etc/skupper-router/runtime/certs"
MANAGEMENT_PORT = 5671
INTER_ROUTER_PORT = 55671
# Each test may run on any worker (tests/conftest.py): a worker's sites take addresses
# of their own /24 (gw0 127.202.1.x, gw1 127.202.2.x...; one process: 127.202.0.x).
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw-1").removeprefix("gw")) + 1
_addresses = (f"127.202.{_WORKER}.{n}" for n in range(10, 200))


@dataclass
class Site:
    """One emulated host running one router (and maybe a model server)."""

    name: str
    address: str
    host_dir: Path
    ca: tuple[bytes, bytes]
    sans: list[str]
    site_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    entities: list[list[Any]] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    kind: str = "imitation"

    @property
    def world_dir(self) -> Path:
        return self.host_dir.parent.parent

    @property
    def command(self) -> list[str]:
        """The container's process, as the router image's launch.sh runs it."""
        return choice.for_world(self.world_dir).start()

    @property
    def log_path(self) -> Path:
        return self.host_dir / "router.log"

    def write_profile(
        self, profile: str, ca_pem: bytes, cert: tuple[bytes, bytes]
    ) -> dict[str, str]:
        folder = self.host_dir / "certs" / profile
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ca.crt").write_bytes(ca_pem)
        (folder / "tls.crt").write_bytes(cert[0])
        (folder / "tls.key").write_bytes(cert[1])
        base = f"{entities.SSL_BASE}/runtime/certs/{profile}"
        self.entities.append(entities.ssl_profile(f"{profile}-profile", base))
        return {"sslProfile": f"{profile}-profile"}

    def env(self) -> dict[str, str]:
        mounts = [
            [CONTAINER_CONFIG, str(self.host_dir / "config")],
            [CONTAINER_CERTS, str(self.host_dir / "certs")],
            ["/tmp", str(self.host_dir / "ctr-tmp")],
        ]
        return {
            **hostenv.host_env(self.host_dir),
            "SSL_PROFILE_BASE_PATH": "/etc/skupper-router",
            "QDROUTERD_CONF": f"{CONTAINER_CONFIG}/skrouterd.json",
            "QDROUTERD_CONF_TYPE": "json",
            hostenv.MOUNTS_VAR: json.dumps(mounts),
            hostenv.TMPFS_VAR: "[]",
            "PYTHONPATH": os.pathsep.join(sys.path),
            **self.extra_env,
        }

    def write_config(self) -> None:
        config_dir = self.host_dir / "config"
        config_dir.mkdir(exist_ok=True)
        (self.host_dir / "ctr-tmp").mkdir(exist_ok=True)
        (config_dir / "skrouterd.json").write_text(json.dumps(self.entities, indent=1))

    def start(self) -> None:
        self.write_config()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command,
                env=self.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5)

    def query(self) -> dict[str, Any] | None:
        """The management answer, or None while the router is not answering."""
        return choice.for_world(self.world_dir).query(self.address, MANAGEMENT_PORT)

    def link(self, name: str) -> dict[str, Any] | None:
        answer = self.query()
        if answer is None:
            return None
        return next((lk for lk in answer["links"] if lk["name"] == name), None)

    def listener(self, name: str) -> dict[str, Any] | None:
        answer = self.query()
        if answer is None:
            return None
        return next((ls for ls in answer["listeners"] if ls["name"] == name), None)


class Routers:
    """Router sites on fresh addresses of this part's test block, all killed at the end."""

    def __init__(self, root: Path, kind: str = "imitation") -> None:
        self.root = root
        self.kind = kind
        self.world_id = uuid.uuid4().hex[:12]
        self.sites: list[Site] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        chosen = choice.choose(kind)
        (root / "world.json").write_text(json.dumps(chosen.record()))

    def site(self, name: str, *, tmp_writable: bool = True, sans: list[str] | None = None) -> Site:
        address = next(_addresses)
        info = write_host(
            self.root,
            name,
            address,
            skupper_version="2.1.3",
            tmp_writable=tmp_writable,
            world_id=self.world_id,
        )
        host_dir = Path(info.host_dir)
        site = Site(name, address, host_dir, certs.new_ca(f"{name}-ca"), sans or [address])
        site.kind = self.kind
        metadata = json.dumps({"id": site.site_id, "name": name, "version": "2.1.3"})
        site.entities += [
            ["router", {"id": f"{name}-1", "mode": "interior", "metadata": metadata}],
            [
                "listener",
                {"name": "amqp", "role": "normal", "host": "localhost", "port": MANAGEMENT_PORT},
            ],
        ]
        self.sites.append(site)
        return site

    def accept_links(self, site: Site) -> None:
        """Give a site an inter-router listener (its RouterAccess) with a server cert."""
        server = certs.issue(*site.ca, f"{site.name}-server", sans=site.sans)
        ref = site.write_profile(f"{site.name}-access", site.ca[0], server)
        site.entities.append(
            [
                "listener",
                {
                    "name": f"{site.name}-inter-router",
                    "role": "inter-router",
                    "host": "0.0.0.0",
                    "port": str(INTER_ROUTER_PORT),
                    "saslMechanisms": "EXTERNAL",
                    "authenticatePeer": True,
                    **ref,
                },
            ]
        )

    def link(
        self,
        source: Site,
        target: Site,
        *,
        client_ca: tuple[bytes, bytes] | None = None,
        verify_hostname: bool | None = None,
    ) -> str:
        """Link ``source`` to ``target`` as a Skupper Link would; returns the link's name."""
        name = f"link-{target.name}"
        client = certs.issue(*(client_ca or target.ca), f"{source.name}-client", server=False)
        ref = source.write_profile(name, target.ca[0], client)
        attrs: dict[str, Any] = {
            "name": name,
            "role": "inter-router",
            "host": target.address,
            "port": str(INTER_ROUTER_PORT),
            "cost": 1,
            **ref,
        }
        if verify_hostname is not None:
            attrs["verifyHostname"] = verify_hostname
        source.entities.append(["connector", attrs])
        return name

    def start(self, *sites: Site) -> None:
        for site in sites:
            site.start()
            assert site.process is not None
            self.processes.append(site.process)
        for site in sites:
            wait_for(site.query, what=f"{site.name}'s management port")

    def start_model(self, site: Site, port: int, model_id: str) -> None:
        process = start_model_server(site.host_dir, "127.0.0.1", port, model_id)
        self.processes.append(process)
        wait_for(lambda: port_open(site.address, port), what="the model server")

    def stop(self) -> None:
        for site in self.sites:
            site.kill()
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=5)


def tcp_listener(site: Site, name: str, port: int, key: str) -> None:
    site.entities.append(
        ["tcpListener", {"name": name, "host": "0.0.0.0", "port": str(port), "address": key}]
    )


def tcp_connector(site: Site, name: str, port: int, key: str) -> None:
    site.entities.append(
        ["tcpConnector", {"name": name, "host": "127.0.0.1", "port": str(port), "address": key}]
    )


def chat(address: str, port: int, text: str) -> dict[str, Any]:
    response = httpx.post(
        f"http://{address}:{port}/v1/chat/completions",
        json={"model": "x", "messages": [{"role": "user", "content": text}]},
        timeout=5,
    )
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


@pytest.fixture(params=router_kinds())
def routers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Routers]:
    created = Routers(tmp_path, request.param)
    try:
        yield created
    finally:
        created.stop()


def two_sites(routers: Routers) -> tuple[Site, Site]:
    """consumer --link--> provider, with the provider's model behind routing key "model"."""
    consumer, provider = routers.site("consumer"), routers.site("provider")
    routers.accept_links(provider)
    routers.link(consumer, provider)
    tcp_listener(consumer, "model-listener", 9000, "model")
    tcp_connector(provider, "model-connector", 10000, "model")
    return consumer, provider


def test_request_through_a_link_reaches_the_providers_model(routers: Routers) -> None:
    consumer, provider = two_sites(routers)
    routers.start_model(provider, 10000, "granite-8b")
    routers.start(provider, consumer)

    wait_for(lambda: port_open(consumer.address, 9000), what="the listener to bind")
    answer = chat(consumer.address, 9000, "hello over the VAN")

    assert answer["model"] == "granite-8b"
    assert "hello over the VAN" in answer["choices"][0]["message"]["content"]


def test_management_answer_describes_links_listeners_and_routes(routers: Routers) -> None:
    consumer, provider = two_sites(routers)
    routers.start(provider, consumer)

    wait_for(
        lambda: (consumer.link("link-provider") or {}).get("remoteSite") == "provider",
        what="the link up to the provider's site",
    )
    # the real router binds a tcpListener some seconds after its address became reachable
    mine = wait_for(
        lambda: (lis := consumer.listener("model-listener")) and lis["bound"] and lis,
        what="the listener bound",
    )
    answer = wait_for(consumer.query, what="the consumer's management answer")
    theirs = wait_for(
        lambda: (t := provider.query()) and t["accepted"] and t,
        what="the provider's accepted connector",
    )

    assert answer["router"] == {
        "id": "consumer-1",
        "site": "consumer",
        "siteId": consumer.site_id,
    }
    assert answer["links"] == [
        {
            "name": "link-provider",
            "host": provider.address,
            "port": str(INTER_ROUTER_PORT),
            "status": "up",
            "error": None,
            "remoteSite": "provider",
        }
    ]
    assert mine == {
        "name": "model-listener",
        "address": "model",
        "host": consumer.address,
        "port": "9000",
        "bound": True,
    }
    assert answer["reachable"] == {"model": 1}
    assert answer["sites"] == ["consumer", "provider"]
    assert [a["remoteSite"] for a in theirs["accepted"]] == ["consumer"]
    assert theirs["connectors"] == [
        {
            "name": "model-connector",
            "address": "model",
            "host": provider.address,
            "port": "10000",
            # its own egress-dispatch connection (tcp_adaptor.c@3.5.1:409), none closed
            "connectionsOpened": 1,
            "connectionsClosed": 0,
        }
    ]
    assert theirs["reachable"] == {"model": 0}


def test_unknown_management_request_gets_an_error_line(routers: Routers) -> None:
    if routers.kind == "real":
        pytest.skip("the one-JSON-line management protocol is the imitation's own")
    site = routers.site("lonely")
    routers.start(site)

    with socket.create_connection((site.address, MANAGEMENT_PORT), timeout=2) as sock:
        sock.sendall(b'{"op": "reboot"}\n')
        reply = json.loads(sock.makefile("rb").readline())

    assert "error" in reply


def test_stream_crosses_two_links_to_a_model_two_hops_away(routers: Routers) -> None:
    edge, hub, provider = routers.site("edge"), routers.site("hub"), routers.site("provider")
    routers.accept_links(hub)
    routers.accept_links(provider)
    routers.link(edge, hub)
    routers.link(hub, provider)
    tcp_listener(edge, "model-listener", 9000, "model")
    tcp_connector(provider, "model-connector", 10000, "model")
    routers.start_model(provider, 10000, "granite-2b")
    routers.start(provider, hub, edge)

    wait_for(lambda: port_open(edge.address, 9000), what="the edge's listener to bind")
    answer = chat(edge.address, 9000, "two hops")

    assert answer["model"] == "granite-2b"
    assert "two hops" in answer["choices"][0]["message"]["content"]
    assert wait_for(edge.query, what="the edge's management answer")["reachable"] == {
        "model": 2
    }  # the provider is 2 hops away


def test_bulk_data_and_half_close_survive_the_link(routers: Routers) -> None:
    consumer, provider = routers.site("consumer"), routers.site("provider")
    routers.accept_links(provider)
    routers.link(consumer, provider)
    tcp_listener(consumer, "echo-listener", 7000, "echo")
    tcp_connector(provider, "echo-connector", 7001, "echo")
    with EchoServer(provider.address, 7001):
        routers.start(provider, consumer)
        wait_for(lambda: port_open(consumer.address, 7000), what="the listener to bind")
        payload = os.urandom(3 * 1024 * 1024)
        with socket.create_connection((consumer.address, 7000), timeout=10) as sock:
            sender = threading.Thread(target=send_then_shutdown, args=(sock, payload))
            sender.start()
            received = read_all(sock)
            sender.join()

    assert received == payload


def send_then_shutdown(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(payload)
    sock.shutdown(socket.SHUT_WR)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


class EchoServer:
    """A TCP echo server in a thread that echoes until the client half-closes."""

    def __init__(self, address: str, port: int) -> None:
        self._sock = socket.create_server((address, port))
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> EchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._sock.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._handle(conn)

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)


class HoldingEchoServer(EchoServer):
    """A TCP echo server in a thread that serves each connection in a thread of its own
    (several stay open at once) until the client half-closes."""

    def __init__(self, address: str, port: int) -> None:
        super().__init__(address, port)
        self._served: list[threading.Thread] = []

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        for served in self._served:
            served.join(timeout=5)

    def _handle(self, conn: socket.socket) -> None:
        served = threading.Thread(target=self._echo, args=(conn,), daemon=True)
        self._served.append(served)
        served.start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(20)
            while data := conn.recv(65536):
                conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)


def _ended(sock: socket.socket) -> bool | None:
    """True once the router closed the connection (EOF or a reset), None while it is only
    quiet."""
    sock.settimeout(0.2)
    try:
        return sock.recv(65536) == b"" or None
    except TimeoutError:
        return None
    except OSError:
        return True


def test_a_connectors_counts_say_the_connections_open_through_it_and_its_delete_closes_them(
    routers: Routers,
) -> None:
    """What down's drain reads right before it withdraws a pool member: the tcpConnector's
    connectionsOpened (1 for its egress-dispatch connection, plus one per connection to its
    server) and connectionsClosed (qd_entity_refresh_tcpConnector, tcp_adaptor.c@3.5.1:
    2747-2765); the management DELETE closes the connections still open
    (dropTcpConnections, default true)."""
    consumer, provider = two_sites(routers)
    with HoldingEchoServer(provider.address, 10000):
        routers.start(provider, consumer)
        wait_for(lambda: port_open(consumer.address, 9000), what="the listener to bind")

        def counts() -> tuple[int, int] | None:
            answer = provider.query() or {"connectors": []}
            found = [c for c in answer["connectors"] if c["name"] == "model-connector"]
            return (found[0]["connectionsOpened"], found[0]["connectionsClosed"]) if found else None

        def open_through(connections: int) -> tuple[int, int] | None:
            """The counts once ``connections`` are open through the connector besides its
            egress-dispatch connection: what down's drain reports as cut."""
            now = counts()
            return now if now is not None and now[0] - now[1] == 1 + connections else None

        # the listener's probe above went through the connector too: counted, then closed
        # (on a loaded machine it may be counted after this reads idle: hence the
        # differences below, which are what the drain reads, and not the counts themselves)
        opened, closed = wait_for(
            lambda: open_through(0), what="no connection open through the connector"
        )
        clients = [socket.create_connection((consumer.address, 9000), timeout=5) for _ in range(3)]
        try:
            for sock in clients:  # each reached the server: an echo came back
                sock.sendall(b"ping")
                assert sock.recv(4) == b"ping"
            now_opened, _ = wait_for(lambda: open_through(3), what="3 open")
            assert now_opened >= opened + 3
            send_then_shutdown(clients[0], b"")
            assert read_all(clients[0]) == b""
            _, now_closed = wait_for(lambda: open_through(2), what="1 closed")
            assert now_closed >= closed + 1

            router = choice.for_world(provider.world_dir)
            gone = router.delete(
                provider.address, MANAGEMENT_PORT, ("tcpConnector", "model-connector")
            )
            assert gone is None, gone
            for sock in clients[1:]:
                assert wait_for(functools.partial(_ended, sock), what="closed by the delete")
        finally:
            for sock in clients:
                sock.close()


def test_link_to_a_host_not_in_the_sans_fails_and_the_listener_never_binds(
    routers: Routers,
) -> None:
    consumer = routers.site("consumer")
    provider = routers.site("provider", sans=["provider.example.com"])
    routers.accept_links(provider)
    routers.link(consumer, provider)
    tcp_listener(consumer, "model-listener", 9000, "model")
    tcp_connector(provider, "model-connector", 10000, "model")
    routers.start(provider, consumer)
    where = f"{provider.address}:{INTER_ROUTER_PORT}"

    link = wait_for(
        lambda: (
            (lk := consumer.link("link-provider")) and "certificate" in (lk["error"] or "") and lk
        ),
        what="the link's certificate error",
    )
    assert isinstance(link, dict)

    # skrouterd 3.4.2's own words, client side then hub side (the router README's facts)
    assert link["status"] != "up"
    assert link["error"] == (
        f"Connection to {where} failed: amqp:connection:framing-error SSL Failure: "
        "error:0A000086:SSL routines::certificate verify failed"
    )
    wait_for(
        lambda: (
            "SERVER (error) [C" in (text := consumer.log_path.read_text())
            and f"] Connection to {where} failed: amqp:connection:framing-error SSL Failure: "
            "error:0A000086:SSL routines::certificate verify failed"
            in text
        ),
        what="the client's verify failure logged",
    )
    wait_for(
        lambda: (
            f"(to {where}) failed: amqp:connection:framing-error SSL Failure: "
            "error:0A000410:SSL routines::sslv3 alert handshake failure"
            in provider.log_path.read_text()
        ),
        what="the hub's handshake failure logged",
    )
    assert consumer.listener("model-listener") == {
        "name": "model-listener",
        "address": "model",
        "host": consumer.address,
        "port": "9000",
        "bound": False,
    }
    assert not port_open(consumer.address, 9000)


def test_a_tcp_probe_of_the_link_port_is_logged_as_an_unexpected_eof(routers: Routers) -> None:
    """A client that opens the inter-router port and closes it without a TLS handshake
    (status's and diagnose's TCP probe of a link port) is, to skrouterd 3.4.2, an incoming
    connection's transport error, logged at error level
    (src/adaptors/amqp/qd_connection.c@3.4.2 PN_TRANSPORT_ERROR; the recorded hub log has
    the same lines): the product's logs tool says so of these lines."""
    provider = routers.site("provider")
    routers.accept_links(provider)
    routers.start(provider)
    where = f"{provider.address}:{INTER_ROUTER_PORT}"
    wait_for(lambda: port_open(provider.address, INTER_ROUTER_PORT), what="the link port")
    with socket.create_connection((provider.address, INTER_ROUTER_PORT), timeout=5):
        pass
    wait_for(
        lambda: (
            f"(to {where}) failed: amqp:connection:framing-error SSL Failure: "
            "error:0A000126:SSL routines::unexpected eof while reading"
            in provider.log_path.read_text()
        ),
        what="the probe's connection logged as an unexpected eof",
    )


#: Logs of the real skupper-router 3.4.2, recorded from a sandbox world's router containers
#: (a consumer with two links, and a hub): the data the imitation's log lines are held to.
RECORDED_LOGS = sorted((Path(__file__).parents[1] / "router_logs").glob("*.log"))
#: skrouterd's line: ``<date> <time>.<micros> +0000 <MODULE> (<level>) <message>``.
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} \+0000 ([A-Z_]+) \((\w+)\) (.*)")
_ADDRESS = r"\d+\.\d+\.\d+\.\d+:\d+"
_TLS_FAILURE = r"failed: amqp:connection:framing-error SSL Failure: error:[0-9A-F]+:SSL routines::"
#: The messages the imitation shares with skrouterd (the product reads the dial failure:
#: skupper_mcp/engine/findings/links.py), each as the start of the message after module and
#: level; the imitation may add detail after it.
SHARED_MESSAGES = {
    ("ROUTER", "info", r"Router started in Interior mode, area=0 id=\S+$"),
    ("ROUTER", "info", r"Version: 3\.4\.2\b"),
    ("SERVER", "info", rf"Listening on {_ADDRESS}$"),
    ("SERVER", "info", rf"\[C\d+\] Accepted connection to {_ADDRESS} from {_ADDRESS}"),
    ("SERVER", "error", rf"\[C\d+\] Connection to {_ADDRESS} {_TLS_FAILURE}"),
    ("SERVER", "error", rf"\[C\d+\] Connection from {_ADDRESS} \(to {_ADDRESS}\) {_TLS_FAILURE}"),
}


def _log_lines(text: str) -> list[re.Match[str]]:
    """The log's lines in skrouterd's shape (start scripts print others before them)."""
    return [m for line in text.splitlines() if (m := LOG_LINE.fullmatch(line))]


def test_the_imitations_log_lines_are_the_recorded_real_routers(tmp_path: Path) -> None:
    """A change to the imitation is checked against the real router's recorded logs, on the
    imitation alone (no real router needed): its lines have skrouterd's shape, modules and
    levels, and the messages it shares with skrouterd read as the recorded ones do."""
    recorded_text = "".join(p.read_text() for p in RECORDED_LOGS)
    recorded = _log_lines(recorded_text)
    assert len(RECORDED_LOGS) >= 2 and len(recorded) == len(recorded_text.splitlines())
    routers = Routers(tmp_path, "imitation")
    try:
        consumer, provider = two_sites(routers)
        elsewhere = routers.site("elsewhere", sans=["elsewhere.example.com"])
        routers.accept_links(elsewhere)
        routers.link(consumer, elsewhere)  # refused: the dialled address is not in its SANs
        routers.start(provider, elsewhere, consumer)
        wait_for(
            lambda: (
                "Accepted connection" in provider.log_path.read_text()
                and "certificate verify failed" in consumer.log_path.read_text()
                and "(to " in elsewhere.log_path.read_text()
            ),
            what="the link up and the refused one logged on both sides",
        )
    finally:
        routers.stop()
    imitation = [m for site in routers.sites for m in _log_lines(site.log_path.read_text())]

    assert {(m[1], m[2]) for m in imitation} <= {(m[1], m[2]) for m in recorded}
    for module, level, message in SHARED_MESSAGES:
        shape = re.compile(message)
        said = [m for m in imitation if shape.match(m[3])]
        assert said, f"the imitation no longer logs {message!r}"
        assert {(m[1], m[2]) for m in said} == {(module, level)}
        real = [m for m in recorded if shape.match(m[3])]
        assert real and {(m[1], m[2]) for m in real} == {(module, level)}, message


def test_verify_hostname_false_accepts_a_host_not_in_the_sans(routers: Routers) -> None:
    consumer = routers.site("consumer")
    provider = routers.site("provider", sans=["provider.example.com"])
    routers.accept_links(provider)
    routers.link(consumer, provider, verify_hostname=False)
    routers.start(provider, consumer)

    wait_for(lambda: (consumer.link("link-provider") or {}).get("status") == "up", what="link")


#: What the hub's OpenSSL says of a client certificate signed by another CA's RSA key: the
#: signature read as a number is checked against the wrong modulus, and which of the two
#: comes out depends on the keys (about half the time each, on the real router).
FOREIGN_SIGNATURE = (
    "SSL Failure: error:0200008A:rsa routines::invalid padding",
    "SSL Failure: error:02000084:rsa routines::data too large for modulus",
)


def test_client_certificate_from_another_ca_is_refused(routers: Routers) -> None:
    consumer, provider = routers.site("consumer"), routers.site("provider")
    routers.accept_links(provider)
    # another CA of the same name, as every site's CA is skupper-site-ca
    routers.link(consumer, provider, client_ca=certs.new_ca("provider-ca"))
    routers.start(provider, consumer)

    link = wait_for(
        lambda: (
            (lk := consumer.link("link-provider")) and "decrypt error" in (lk["error"] or "") and lk
        ),
        what="the link's TLS alert",
    )
    assert isinstance(link, dict)

    assert link["status"] != "up"
    assert link["error"].endswith(
        "SSL Failure: error:0A00041B:SSL routines::tlsv1 alert decrypt error"
    )
    assert wait_for(provider.query, what="the provider's management answer")["accepted"] == []
    # the hub's log is a file the router flushes as it writes: on a busy machine the line
    # can take longer than the link's own failure
    wait_for(
        lambda: any(refusal in provider.log_path.read_text() for refusal in FOREIGN_SIGNATURE),
        timeout=60,
        what="the hub's refusal logged",
    )


def test_listener_follows_the_providers_router_down_and_up(routers: Routers) -> None:
    consumer, provider = two_sites(routers)
    # skrouterd keeps a lost router's addresses until remoteLsMaxAgeSeconds pass: 60 s by
    # default (Skupper leaves it so), 5 s here, where the wait is not what is tested
    consumer.entities[0][1]["remoteLsMaxAgeSeconds"] = 5
    routers.start(provider, consumer)
    wait_for(lambda: port_open(consumer.address, 9000), what="the listener to bind")

    provider.kill()
    wait_for(lambda: not port_open(consumer.address, 9000), timeout=20, what="listener to unbind")
    link = wait_for(consumer.query, what="the consumer's management answer")["links"][0]
    assert link["status"] != "up"
    assert wait_for(consumer.query, what="the consumer's management answer")["reachable"] == {}

    routers.start(provider)
    wait_for(lambda: port_open(consumer.address, 9000), timeout=30, what="the listener to rebind")
    assert (consumer.link("link-provider") or {}).get("status") == "up"


@pytest.mark.parametrize("release", ["3.5.1", "3.4.2"])
def test_a_lost_routers_address_goes_as_the_consumers_router_release_says(
    tmp_path: Path, release: str
) -> None:
    """3.5.x (Skupper 2.2.x) invalidates an unreachable router's addresses after
    unreachableHoldoffSeconds (1 s); 3.4.x keeps them until remoteLsMaxAgeSeconds (60 s)."""
    routers = Routers(tmp_path, "imitation")  # a real skrouterd's release is its binary's
    try:
        consumer, provider = two_sites(routers)
        consumer.extra_env[RELEASE_VAR] = release  # the router image's tag
        routers.start(provider, consumer)
        wait_for(lambda: port_open(consumer.address, 9000), what="the listener to bind")
        wait_for(
            lambda: (consumer.link("link-provider") or {}).get("status") == "up",
            what="the link up",
        )

        provider.kill()
        lost = time.monotonic()
        if release.startswith("3.5"):
            wait_for(
                lambda: not port_open(consumer.address, 9000),
                timeout=40,
                what="the listener to unbind after the holdoff",
            )
            # the subject: seconds (the holdoff), not 3.4's 60 s; clear of both under load
            assert time.monotonic() - lost < 40
        else:
            # still bound well past 3.5's holdoff: polled, with the link seen down first
            wait_for(
                lambda: (consumer.link("link-provider") or {}).get("status") != "up",
                timeout=20,
                what="the link down",
            )

            def still_bound_after_five_seconds() -> bool:
                assert port_open(consumer.address, 9000), "unbound before remoteLsMaxAge"
                return time.monotonic() - lost > 5

            wait_for(still_bound_after_five_seconds, timeout=20, what="five seconds bound")
    finally:
        routers.stop()


def test_a_connector_reads_failed_for_a_moment_after_each_failed_attempt(tmp_path: Path) -> None:
    """skrouterd sets a connector FAILED on the transport error and CONNECTING again when the
    connection is freed, until the retry (qd_connector.c@3.4.2:401, :531): a management
    query may see either; skmanage says FAILED. The imitation holds FAILED a moment so a
    query can see it (a real router's is too short to poll for)."""
    from skupper_sandbox.router.skmanage import connector_entities

    routers = Routers(tmp_path, "imitation")
    try:
        consumer, _provider = two_sites(routers)
        routers.start(consumer)  # the provider's router never runs: every attempt fails
        seen: set[str] = set()

        def both_seen() -> bool:
            link = consumer.link("link-provider")
            if link is not None:
                seen.add(str(link["status"]))
                if link["status"] == "down":
                    [entity] = connector_entities({"links": [link]})
                    assert entity["connectionStatus"] == "FAILED"
                    assert entity["connectionMsg"].startswith("Connection to ")
            return {"down", "connecting"} <= seen

        wait_for(both_seen, timeout=30, every=0.05, what="FAILED and CONNECTING both seen")
        assert "up" not in seen
    finally:
        routers.stop()


def test_sigterm_shuts_the_router_down_cleanly(routers: Routers) -> None:
    site = routers.site("lonely")
    routers.start(site)
    assert site.process is not None

    site.process.send_signal(signal.SIGTERM)

    assert site.process.wait(timeout=10) == 0  # skrouterd handles SIGTERM and exits 0


def test_router_without_tmpfs_on_a_read_only_tmp_host_runs_standalone(
    routers: Routers,
) -> None:
    site = routers.site("rhel-ai", tmp_writable=False)
    routers.accept_links(site)
    tcp_connector(site, "model-connector", 10000, "model")
    site.start()
    assert site.process is not None

    wait_for(
        lambda: f"Listening on {site.address}:amqp" in site.log_path.read_text(),
        what="the default config's listener",
    )
    log = site.log_path.read_text()
    # configure.sh's redirection fails; launch.sh then starts skrouterd on the image default
    assert (
        "/home/skrouterd/bin/configure.sh: line 38: /tmp/skrouterd.json: Permission denied" in log
    )
    assert "ROUTER (info) Router started in Standalone mode" in log
    assert site.process.poll() is None  # the container keeps running...
    assert site.query() is None  # ...with no management listener of the site's,
    assert not port_open(site.address, INTER_ROUTER_PORT)  # no link listener
    assert not (site.host_dir / "ctr-tmp" / "skrouterd.json").exists()


def test_router_with_tmpfs_starts_on_a_read_only_tmp_host(routers: Routers) -> None:
    site = routers.site("rhel-ai", tmp_writable=False)
    site.extra_env[hostenv.TMPFS_VAR] = json.dumps(["/tmp"])
    routers.start(site)

    assert (site.host_dir / "ctr-tmp" / "skrouterd.json").is_file()


def start_up_failure(profile: str, attribute: str, path: Path) -> str:
    """skrouterd 3.4.2's last words when a profile's PEM file does not load."""
    return (
        "ROUTER (critical) Router start-up failed: Python: CError: Configuration: Failed to "
        f"configure TLS {attribute} '{path}' from sslProfile '{profile}'"
    )


def test_router_refuses_to_start_with_an_unexpanded_ssl_profile_path(routers: Routers) -> None:
    site = routers.site("provider")
    routers.accept_links(site)
    site.write_config()
    env_without = {k: v for k, v in site.env().items() if k != "SSL_PROFILE_BASE_PATH"}

    process = subprocess.run(
        site.command,
        env=env_without,
        capture_output=True,
        text=True,
        timeout=20,
    )

    assert process.returncode == 1
    unexpanded = Path("${SSL_PROFILE_BASE_PATH}/runtime/certs/provider-access/ca.crt")
    expected = start_up_failure("provider-access-profile", "caCertFile", unexpanded)
    assert expected in process.stdout + process.stderr


def test_router_refuses_to_start_when_a_key_is_missing_naming_the_certificate(
    routers: Routers,
) -> None:
    site = routers.site("provider")
    routers.accept_links(site)
    profile = site.host_dir / "certs" / "provider-access"
    (profile / "tls.key").unlink()
    site.start()
    assert site.process is not None

    assert site.process.wait(timeout=20) == 1
    expected = start_up_failure("provider-access-profile", "certFile", profile / "tls.crt")
    assert expected in site.log_path.read_text()


def test_router_refuses_to_start_when_a_ca_is_not_pem(routers: Routers) -> None:
    site = routers.site("provider")
    routers.accept_links(site)
    profile = site.host_dir / "certs" / "provider-access"
    (profile / "ca.crt").write_text("not a certificate")
    (profile / "tls.key").write_text("not a key either")  # only the first bad file is named
    site.start()
    assert site.process is not None

    assert site.process.wait(timeout=20) == 1
    log = site.log_path.read_text()
    assert start_up_failure("provider-access-profile", "caCertFile", profile / "ca.crt") in log
    assert "tls.key" not in log


def test_a_bad_profile_nothing_uses_does_not_stop_the_router(routers: Routers) -> None:
    site = routers.site("provider")
    site.write_profile("unused", b"not a certificate", (b"not a cert", b"not a key"))
    routers.start(site)

    assert site.process is not None and site.process.poll() is None


def test_listener_and_connector_on_one_router_are_joined_directly(routers: Routers) -> None:
    site = routers.site("local")
    tcp_listener(site, "echo-listener", 7100, "echo")
    tcp_connector(site, "echo-connector", 7101, "echo")
    with EchoServer(site.address, 7101):
        routers.start(site)
        wait_for(lambda: port_open(site.address, 7100), what="the listener to bind")
        with socket.create_connection((site.address, 7100), timeout=5) as sock:
            send_then_shutdown(sock, b"ping")
            received = read_all(sock)

    assert received == b"ping"
    assert wait_for(site.query, what="the site's management answer")["reachable"] == {"echo": 0}


@pytest.mark.parametrize("kept", [True, False])
def test_a_kept_management_connection_outlives_the_routers_idle_timeout(
    tmp_path: Path, kept: bool
) -> None:
    """The controller keeps one management connection per router between its queries; the
    router drops one that sends nothing for its listener's idle timeout, so the controller
    lets it run its heartbeats meanwhile."""
    real = choice.choose("auto")
    if real.kind != "real":
        pytest.skip(f"the real router cannot run here: {real.reason}")
    routers = Routers(tmp_path, "real")
    try:
        site = routers.site("idle")
        site.entities[1][1]["idleTimeoutSeconds"] = 2
        routers.start(site)
        with amqp_management.Management(site.address, MANAGEMENT_PORT, timeout=5) as session:
            assert session.query("router", ["id"])
            # a fixed window, the test's subject: over two idle timeouts without a request
            quiet_until = time.monotonic() + 5
            while time.monotonic() < quiet_until:
                if kept:
                    session.keep_alive()
                time.sleep(0.5)
            if kept:
                assert session.query("router", ["id"])
            else:
                with pytest.raises(amqp_management.ManagementError):
                    session.query("router", ["id"])
    finally:
        routers.stop()
