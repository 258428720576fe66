"""The router's pure parts: configuration, routing table, framing, host name check."""

from __future__ import annotations

import asyncio
import json
import re
import ssl
from pathlib import Path

import pytest

from skupper_sandbox import certs
from skupper_sandbox.errors import RouterConfigError as ConfigError
from skupper_sandbox.router.config import check_ssl_profiles, expand, parse
from skupper_sandbox.router.management import respond
from skupper_sandbox.router.protocol import Frame, FrameType, ProtocolError, read_frame
from skupper_sandbox.router.release import link_state_hold
from skupper_sandbox.router.routing import MAX_COST, Route, RouteTable
from skupper_sandbox.router.tls import HostnameMismatch, check_hostname

METADATA = json.dumps({"id": "site-uuid", "name": "hub-rhel-ai", "version": "2.1.3"})
CONFIG = [
    ["router", {"id": "hub-rhel-ai-1-2", "mode": "interior", "metadata": METADATA}],
    [
        "sslProfile",
        {
            "name": "access-profile",
            "caCertFile": "${SSL_PROFILE_BASE_PATH}/runtime/certs/access/ca.crt",
            "certFile": "${SSL_PROFILE_BASE_PATH}/runtime/certs/access/tls.crt",
            "privateKeyFile": "${SSL_PROFILE_BASE_PATH}/runtime/certs/access/tls.key",
        },
    ],
    [
        "listener",
        {
            "name": "access-inter-router",
            "role": "inter-router",
            "host": "0.0.0.0",
            "port": "8000",
            "sslProfile": "access-profile",
            "authenticatePeer": True,
        },
    ],
    [
        "connector",
        {
            "name": "link-x",
            "role": "inter-router",
            "host": "10.0.0.1",
            "port": 55671,
            "sslProfile": "access-profile",
            "cost": "2",
            "verifyHostname": "false",
        },
    ],
    ["tcpListener", {"name": "l", "host": "0.0.0.0", "port": "9000", "address": "k"}],
    ["tcpConnector", {"name": "c", "host": "127.0.0.1", "port": "9000", "address": "k"}],
    ["address", {"prefix": "mc", "distribution": "multicast"}],
]


def test_parse_reads_the_entities_the_router_honours() -> None:
    config = parse(json.dumps(CONFIG))

    assert (config.router.id, config.router.site_name, config.router.site_id) == (
        "hub-rhel-ai-1-2",
        "hub-rhel-ai",
        "site-uuid",
    )
    assert config.listeners[0].port == 8000 and config.listeners[0].authenticate_peer
    link = config.connectors[0]
    assert (link.port, link.cost, link.verify_hostname) == (55671, 2, False)
    assert [t.address for t in config.tcp_listeners + config.tcp_connectors] == ["k", "k"]


def test_verify_hostname_defaults_to_true() -> None:
    entities = [
        CONFIG[0],
        CONFIG[1],
        ["connector", {"name": "a", "host": "h", "port": "1", "sslProfile": "access-profile"}],
    ]

    assert parse(json.dumps(entities)).connectors[0].verify_hostname is True


@pytest.mark.parametrize(
    ("entities", "message"),
    [
        ("{", "not valid JSON"),
        (json.dumps([["listener", {"name": "a", "port": "1"}]]), "no router entity"),
        (json.dumps([CONFIG[0], ["listener", {"name": "a", "port": "x"}]]), "listener 'a'"),
        (
            json.dumps([CONFIG[0], ["connector", {"name": "a", "port": "1", "sslProfile": "p"}]]),
            "not defined",
        ),
    ],
)
def test_parse_names_what_is_wrong(entities: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse(entities)


def test_expand_leaves_unknown_variables_as_written() -> None:
    text = "${SSL_PROFILE_BASE_PATH}/a $HOME/b ${MISSING}/c"

    assert (
        expand(text, {"SSL_PROFILE_BASE_PATH": "/etc/r", "HOME": "/h"})
        == "/etc/r/a /h/b ${MISSING}/c"
    )


def test_check_ssl_profiles_names_the_first_file_that_does_not_load(tmp_path: Path) -> None:
    """skrouterd 3.4.2: caCertFile first, then certFile (which stands for the key too)."""
    failure = "Failed to configure TLS {} '{}' from sslProfile 'access-profile'"
    unexpanded = parse(json.dumps(CONFIG))
    ca = "${SSL_PROFILE_BASE_PATH}/runtime/certs/access/ca.crt"
    with pytest.raises(ConfigError, match=re.escape(failure.format("caCertFile", ca))):
        check_ssl_profiles(unexpanded, Path)

    expanded = parse(expand(json.dumps(CONFIG), {"SSL_PROFILE_BASE_PATH": str(tmp_path)}))
    folder = tmp_path / "runtime" / "certs" / "access"
    folder.mkdir(parents=True)
    ca_pem, ca_key = certs.new_ca("access-ca")
    (folder / "ca.crt").write_bytes(ca_pem)
    with pytest.raises(
        ConfigError, match=re.escape(failure.format("certFile", folder / "tls.crt"))
    ):
        check_ssl_profiles(expanded, Path)

    cert, key = certs.issue(ca_pem, ca_key, "access", sans=["localhost"])
    (folder / "tls.crt").write_bytes(cert)
    (folder / "tls.key").write_text("not a key")
    with pytest.raises(ConfigError, match="certFile"):
        check_ssl_profiles(expanded, Path)
    (folder / "tls.key").write_bytes(key)
    check_ssl_profiles(expanded, Path)


def test_best_route_prefers_local_then_cheapest_peer() -> None:
    table = RouteTable()
    table.learn("b", {"k": 1}, link_cost=1)
    table.learn("a", {"k": 3}, link_cost=1)

    assert table.best("k") == Route("b", 2)
    table.set_local({"k"})
    assert table.best("k") == Route(None, 0)


def test_split_horizon_does_not_advertise_a_route_back_to_its_peer() -> None:
    table = RouteTable()
    table.learn("b", {"k": 0}, link_cost=1)

    assert table.advertisement_for("b") == {}
    assert table.advertisement_for("c") == {"k": 1}


def test_a_route_held_from_a_lost_peer_is_kept_but_not_passed_on() -> None:
    """A router that lost "b" keeps b's key for its hold (its own listener stays bound) but
    tells its live neighbours only what it reaches now: they compute b unreachable from the
    link states, as real routers do, and drop it on their own hold, not on this one's."""
    table = RouteTable()
    table.learn("b", {"k": 0}, link_cost=1)
    table.learn("c", {"j": 0}, link_cost=1)
    table.set_local({"mine"})

    assert table.best("k") == Route("b", 1)  # held: b's link is gone, its routes stay
    assert table.advertisement_for("c", alive={"c"}) == {"mine": 0}
    assert table.advertisement_for("c", alive={"b", "c"}) == {"k": 1, "mine": 0}
    assert table.advertisement_for("b", alive={"b", "c"}) == {"j": 1, "mine": 0}
    assert table.advertisement_for("c") == {"k": 1, "mine": 0}  # without alive: everything


def test_routes_through_a_closed_link_are_dropped() -> None:
    table = RouteTable()
    table.learn("b", {"k": 0}, link_cost=1)

    assert table.forget("b") is True
    assert table.best("k") is None
    assert table.reachable() == {}
    assert table.forget("b") is False


def test_routes_longer_than_the_hop_limit_are_unreachable() -> None:
    table = RouteTable()
    table.learn("b", {"far": MAX_COST, "near": MAX_COST - 1}, link_cost=1)

    assert table.reachable() == {"near": MAX_COST}
    assert table.advertisement_for("c") == {}


def test_learn_reports_whether_anything_changed() -> None:
    table = RouteTable()

    assert table.learn("b", {"k": 0}, 1) is True
    assert table.learn("b", {"k": 0}, 1) is False
    assert table.learn("b", {"k": 1}, 1) is True


def test_hostname_check_uses_dns_sans_only() -> None:
    ca = certs.new_ca("ca")
    cert_pem, _ = certs.issue(*ca, "server", sans=["10.1.2.3", "hub.example.com"])
    der = ssl.PEM_cert_to_DER_cert(cert_pem.decode())

    check_hostname("hub.example.com", der)
    check_hostname("10.1.2.3", der)  # IP SANs are also written as DNS SANs
    with pytest.raises(HostnameMismatch, match="certificate verify failed: Hostname mismatch"):
        check_hostname("other.example.com", der)


async def test_frames_round_trip_and_bad_frames_are_refused() -> None:
    frame = Frame(FrameType.DATA, 7, b"payload")
    reader = asyncio.StreamReader()
    reader.feed_data(frame.encode() + bytes([99, 0, 0, 0, 1, 0, 0, 0, 0]))
    reader.feed_eof()

    assert await read_frame(reader) == frame
    with pytest.raises(ProtocolError, match="unknown frame type"):
        await read_frame(reader)


async def test_clean_eof_between_frames_is_none() -> None:
    reader = asyncio.StreamReader()
    reader.feed_eof()

    assert await read_frame(reader) is None


def test_management_respond_answers_only_query() -> None:
    def answer() -> dict[str, object]:
        return {"router": {}}

    assert respond(b'{"op": "query"}\n', answer) == {"router": {}}
    assert "error" in respond(b"nonsense\n", answer)
    assert "error" in respond(b'{"op": "delete"}\n', answer)


def test_configure_copies_expands_and_reports_like_configure_sh(tmp_path: Path) -> None:
    from skupper_sandbox import hostenv
    from skupper_sandbox.router import launch

    conf_dir = tmp_path / "config"
    conf_dir.mkdir()
    (conf_dir / "skrouterd.json").write_text(
        '# ${SSL_PROFILE_BASE_PATH} stays in a comment\n"${SSL_PROFILE_BASE_PATH}/a $NOPE/b"\n'
    )
    env = {
        "QDROUTERD_CONF": "/etc/skupper-router/config/skrouterd.json,/etc/missing.json",
        "SSL_PROFILE_BASE_PATH": "/etc/skupper-router",
        hostenv.MOUNTS_VAR: json.dumps([["/etc/skupper-router/config", str(conf_dir)]]),
    }

    text, stdout, stderr = launch.configure(env, "/tmp/skrouterd.json", writable=True)
    assert text == (
        '# ${SSL_PROFILE_BASE_PATH} stays in a comment\n"/etc/skupper-router/a $NOPE/b"\n'
    )
    assert stdout == ["No such file or directory: /etc/missing.json"]
    assert stderr == []

    text, stdout, stderr = launch.configure(env, "/tmp/skrouterd.json", writable=False)
    assert text is None
    assert stderr == [
        "/home/skrouterd/bin/configure.sh: line 38: /tmp/skrouterd.json: Permission denied"
    ]


def test_real_router_config_adapts_only_local_addresses_and_mounted_paths(tmp_path: Path) -> None:
    from skupper_sandbox import hostenv
    from skupper_sandbox.router import launch

    host = hostenv.HostInfo(
        "rhel-ai", "127.9.0.2", "root", 0, "provider", "2.1.3", True, "w", str(tmp_path), ""
    )
    env = {hostenv.MOUNTS_VAR: json.dumps([["/etc/skupper-router", "/host/ns"]])}
    config = [
        ["router", {"id": "r", "mode": "interior"}],
        ["listener", {"name": "l", "host": "", "port": "55671"}],
        ["listener", {"name": "m", "host": "127.0.0.1", "port": 5671}],
        ["connector", {"name": "c", "host": "127.9.0.3", "port": "55671"}],
        ["tcpListener", {"name": "t", "host": "0.0.0.0", "port": "9000"}],
        ["tcpConnector", {"name": "u", "host": "localhost", "port": "9000"}],
        ["sslProfile", {"name": "p", "caCertFile": "/etc/skupper-router/certs/p/ca.crt"}],
    ]

    adapted = json.loads(launch.adapt_json(json.dumps(config), host, env))

    hosts = [attrs.get("host") for _, attrs in adapted[1:6]]
    assert hosts == ["127.9.0.2", "127.9.0.2", "127.9.0.3", "127.9.0.2", "127.9.0.2"]
    assert adapted[6][1]["caCertFile"] == "/host/ns/certs/p/ca.crt"
    assert adapted[0] == config[0]
    default = "listener {\n    host: 0.0.0.0\n    port: amqp\n}\n"
    assert launch.adapt_conf(default, host) == default.replace("0.0.0.0", "127.9.0.2")


def test_best_route_prefers_a_live_peer_over_a_lost_one() -> None:
    table = RouteTable()
    table.learn("lost", {"k": 0}, link_cost=1)
    table.learn("live", {"k": 2}, link_cost=1)

    assert table.best("k") == Route("lost", 1)
    assert table.best("k", alive={"live"}) == Route("live", 3)
    assert table.best("k", alive=set()) == Route("lost", 1)  # a lost router's key, kept a while


def test_the_router_is_the_imitation_unless_skmcp_skupper_router_names_one_that_runs(
    tmp_path: Path,
) -> None:
    from skupper_sandbox.router import choice
    from skupper_sandbox.router.seam import HOME_VAR

    unset = choice.choose("auto", env={})
    assert (unset.kind, unset.home) == ("imitation", None)
    assert HOME_VAR in unset.reason  # what the [real] variants' skip says
    broken = choice.choose("auto", env={HOME_VAR: str(tmp_path / "nowhere")})
    assert broken.kind == "imitation" and "no skrouterd at" in broken.reason
    with pytest.raises(FileNotFoundError, match=HOME_VAR):
        choice.choose("real", env={})
    assert choice.choose("imitation", env={HOME_VAR: "/usr"}).kind == "imitation"
    with pytest.raises(ValueError):
        choice.choose("other", env={})

    # An install (here a stand-in that only answers --version): the binary or its prefix.
    binary = tmp_path / "prefix" / "sbin" / "skrouterd"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho 3.4.2\n")
    binary.chmod(0o755)
    for named in (binary, binary.parent.parent):
        real = choice.choose("auto", env={HOME_VAR: str(named)})
        assert (real.kind, real.home) == ("real", str(tmp_path / "prefix"))
    assert real.describe() == "router skrouterd 3.4.2 (real)"
    assert real.start("python") == ["python", "-m", "skupper_sandbox.router.real"]

    world = tmp_path / "world"
    world.mkdir()
    assert choice.for_world(world).kind == "imitation"  # no world.json: an older world
    (world / "world.json").write_text(json.dumps(real.record()))
    again = choice.for_world(world)
    assert (again.kind, again.home, again.describe()) == (real.kind, real.home, real.describe())


def test_the_real_router_is_started_on_the_adapted_copy_configure_sh_leaves(
    tmp_path: Path,
) -> None:
    from skupper_sandbox import hostenv
    from skupper_sandbox.router.skrouterd import Skrouterd

    host = hostenv.HostInfo(
        "rhel-ai", "127.9.0.2", "root", 0, "provider", "2.1.3", True, "w", str(tmp_path), ""
    )
    (tmp_path / "config").mkdir()
    (tmp_path / "ctr" / "tmp").mkdir(parents=True)
    (tmp_path / "config" / "skrouterd.json").write_text(
        json.dumps([["listener", {"name": "l", "host": "0.0.0.0", "port": "5671"}]])
    )
    env = {
        "QDROUTERD_CONF": "/etc/skupper-router/config/skrouterd.json",
        "QDROUTERD_CONF_TYPE": "json",
        hostenv.MOUNTS_VAR: json.dumps(
            [
                ["/etc/skupper-router/config", str(tmp_path / "config")],
                ["/tmp", str(tmp_path / "ctr" / "tmp")],
            ]
        ),
    }
    router = Skrouterd(str(tmp_path / "prefix"))

    started = router.config(host, env)

    adapted = tmp_path / "ctr" / "skrouterd-sandbox.json"
    assert started.argv == [
        str(tmp_path / "prefix" / "sbin" / "skrouterd"),
        "-c",
        str(adapted),
        "-I",
        str(tmp_path / "prefix" / "lib" / "skupper-router" / "python"),
    ]
    assert json.loads(adapted.read_text())[0][1]["host"] == "127.9.0.2"
    assert started.text == adapted.read_text()
    assert (
        json.loads((tmp_path / "ctr" / "tmp" / "skrouterd.json").read_text())[0][1]["host"]
        == "0.0.0.0"
    )  # the container's own copy stays as rendered


def test_a_3_4_router_forgets_a_lost_router_30_to_63_seconds_after_the_loss() -> None:
    """skupper-router 3.4.x ages a lost router's link state remoteLsMaxAgeSeconds (60) after
    the last router advertisement it heard (one every raIntervalSeconds, 30), then sweeps
    for about three ticks (python/skupper_router_internal/router/node.py@3.4.2:88,111-113,
    288): where the loss falls between two advertisements decides, so the hold is drawn
    from 30-63 s, never exactly 60 s."""
    import random

    rng = random.Random(44)
    holds = [link_state_hold(60.0, 3600.0, rng=rng) for _ in range(400)]
    assert all(30.0 <= hold <= 63.0 for hold in holds)
    assert min(holds) < 35.0 and max(holds) > 58.0
    # a link up for 5 s had its first advertisement then: at least 55 s
    assert all(55.0 <= link_state_hold(60.0, 5.0, rng=rng) <= 63.0 for _ in range(100))
