"""down's drain of a pool member, its pure parts: which pools a provider's down drains and
with which key (``engine.drain.drain_targets``), and what ``scripts/drain.sh`` printed
(``facts.drain.parse_drain``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skupper_mcp.engine.drain import DrainLog, drain_actions, drain_targets
from skupper_mcp.errors import ConnectError, Unparsed
from skupper_mcp.facts.drain import Drained, drain_script, parse_drain
from skupper_mcp.topology import Topology, parse_topology
from topology_samples import SMALL_TOPOLOGY

ANY_POOL = 'POOLS="chat"\nPOOL_CHAT_PROVIDERS="alpha b-fast"\nPOOL_CHAT_LOCAL_PORT=9100\n'
PRIORITY = ANY_POOL + "POOL_CHAT_STRATEGY=priority\nSKUPPER_MIN_VERSION=2.2.0\n"


def topology(extra: str) -> Topology:
    return parse_topology(SMALL_TOPOLOGY + extra, Path("topology.env"))


def test_a_member_is_drained_only_while_another_member_runs_and_is_not_stopped_with_it() -> None:
    topo = topology(ANY_POOL)
    [pool] = topo.pools
    [target] = drain_targets(topo, "alpha", {"alpha"}, {"alpha", "beta"})
    assert (target.pool.name, target.member, target.routing_key) == (
        "chat",
        "alpha",
        "pool-chat",
    )
    assert target.routing_key == pool.routing_key  # an any pool: the pool's own key
    assert target.others == ("beta",)
    assert drain_targets(topo, "alpha", {"alpha", "beta"}, {"alpha", "beta"}) == []
    assert drain_targets(topo, "alpha", {"alpha"}, {"alpha"}) == []  # beta is down already


def test_a_multikeylistener_pools_member_withdraws_its_own_key() -> None:
    topo = topology(PRIORITY)
    [target] = drain_targets(topo, "beta", {"beta"}, {"alpha"})
    [pool] = topo.pools
    member = next(m for m in pool.members if m.provider == "beta")
    assert target.routing_key == topo.member_endpoint(member).routing_key
    assert target.routing_key != pool.routing_key


def test_the_drain_script_quotes_its_operands_once() -> None:
    text = drain_script("team a", "skupper-router", "model-pool-chat")
    assert text.count("set -- 'team a' skupper-router model-pool-chat 16384 8") == 1, text
    assert "''team a''" not in text
    assert "skmanage" in text and "delete --type=tcpConnector" in text


#: skmanage query --type=tcpConnector name connectionsOpened connectionsClosed, framed: the
#: pool's connector has opened 9 (1 its egress-dispatch connection) and closed 5: 3 open.
COUNTS = (
    "@@connections\n"
    '|[{"name": "connector/model-pool-chat@127.0.0.1", "connectionsOpened": 9, '
    '"connectionsClosed": 5}, {"name": "other@h", "connectionsOpened": 4, '
    '"connectionsClosed": 0}]\n'
    "@@rc 0\n"
)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "@@found 1\n" + COUNTS + "@@delete connector/model-pool-chat@127.0.0.1\n@@rc 0\n"
            "@@end\n",
            Drained(("connector/model-pool-chat@127.0.0.1",), None, True, 3),
        ),
        (
            "@@no-management\n",
            Drained((), "the router's config names no management listener to ask"),
        ),
        (
            "@@no-connector\n",
            Drained((), "the router's config holds no tcpConnector for model-pool-chat"),
        ),
        (
            "@@found 1\n" + COUNTS + "@@delete a@h\n@@stderr\n"
            "|NotFoundStatus: No entity with name='a@h'\n@@rc 1\n@@end\n",
            Drained((), "skmanage delete a@h: NotFoundStatus: No entity with name='a@h'", True, 0),
        ),
    ],
)
def test_what_the_drain_did_is_read_from_its_frames(output: str, expected: Drained) -> None:
    assert parse_drain(output, "model-pool-chat") == expected


@pytest.mark.parametrize(
    "output",
    [
        "",  # nothing ran
        "@@found 1\n",  # cut before its first delete
        "@@delete a@h\n@@rc 0\n@@end\n",  # no count of what it found
        "@@found 2\n@@delete a@h\n@@rc 0\n@@end\n",  # a delete missing, yet ended
        "@@found 1\n@@delete a;rm -rf ~\n@@rc 0\n@@end\n",  # not a name Skupper renders
    ],
)
def test_a_drain_that_did_not_run_to_its_end_or_names_what_is_not_skuppers_is_unparsed(
    output: str,
) -> None:
    with pytest.raises(Unparsed):
        parse_drain(output, "model-pool-chat")


def test_an_answer_cut_after_a_delete_is_a_partial_drain_not_fewer_names() -> None:
    """The first delete's status came back, then the answer ended: the second may have run
    too. What was deleted is kept, and the answer says it is not the whole of it."""
    cut = "@@found 2\n@@delete a@h\n@@rc 0\n@@delete b@h\n"
    drained = parse_drain(cut, "model-pool-chat")
    assert drained.deleted == ("a@h",) and drained.complete is False
    assert drained.problem is not None and "cut after 2 of 2 deletes" in drained.problem


def test_more_connectors_than_the_drain_deletes_is_said() -> None:
    output = "@@found 9\n" + "".join(f"@@delete c{i}@h\n@@rc 0\n" for i in range(8)) + "@@end\n"
    drained = parse_drain(output, "model-pool-chat")
    assert len(drained.deleted) == 8 and drained.complete
    assert drained.problem is not None and "holds 9 tcpConnectors" in drained.problem


class _LostAnswerSite:
    """A member's site whose drain ran, but whose answer was lost on the way back."""

    def drain(self, routing_key: str) -> str:
        return f"drain {routing_key}"

    async def drained(self, routing_key: str) -> Drained:
        raise ConnectError("alpha", "the SSH connection was lost")


def test_a_drain_whose_answer_was_lost_counts_as_may_have_withdrawn() -> None:
    """The deletes may have run before the connection went: the down goes on, and if it
    stops before the router does, that router is restarted (updown._restore_withdrawn)."""
    import asyncio

    topo = topology(ANY_POOL)
    [target] = drain_targets(topo, "alpha", {"alpha"}, {"alpha", "beta"})
    log = DrainLog()
    withdraw, _ = drain_actions(topo, _LostAnswerSite(), target, None, log)  # type: ignore[arg-type]

    async def withdrawing() -> str:
        return await withdraw.run()

    said = asyncio.run(withdrawing())
    assert "could not be read" in said, said
    [row] = log.may_have_withdrawn("alpha")
    assert row.withdrawn == [] and row.drained is False, row
    assert log.may_have_withdrawn("beta") == []


@pytest.mark.parametrize(
    ("counts", "why"),
    [
        (
            "@@connections\n@@stderr\n|NotImplementedStatus: no\n@@rc 1\n",
            "skmanage query --type=tcpConnector: NotImplementedStatus: no",
        ),
        ('@@connections\n|[{"name": "a@h"}]\n@@rc 0\n', "counts are not numbers"),
        ("@@connections\n|[]\n@@rc 0\n", "no counts for a@h"),
        (
            '@@connections\n|[{"name": "a@h", "connectionsOpened": 2, "connectionsClosed": 2}]\n'
            "@@rc 0\n",
            "do not add up",
        ),
        ('@@connections\n|[{"name": "a@h", "conn\n@@rc 0\n', "not JSON"),
        ("", "did not run to its end"),
    ],
)
def test_counts_that_cannot_be_read_are_null_with_the_reason_never_a_guessed_0(
    counts: str, why: str
) -> None:
    output = "@@found 1\n" + counts + "@@delete a@h\n@@rc 0\n@@end\n"
    drained = parse_drain(output, "model-pool-chat")
    assert drained.deleted == ("a@h",) and drained.open_at_withdrawal is None, drained
    assert drained.open_unread is not None and why in drained.open_unread, drained


def test_counts_only_the_connectors_the_drain_deleted() -> None:
    """Connections through a connector whose delete was refused were not cut."""
    counts = (
        '@@connections\n|[{"name": "a@h", "connectionsOpened": 4, "connectionsClosed": 1}, '
        '{"name": "b@h", "connectionsOpened": 9, "connectionsClosed": 0}]\n@@rc 0\n'
    )
    output = (
        "@@found 2\n" + counts + "@@delete a@h\n@@rc 0\n"
        "@@delete b@h\n@@stderr\n|ForbiddenStatus: no\n@@rc 1\n@@end\n"
    )
    drained = parse_drain(output, "model-pool-chat")
    assert (drained.deleted, drained.open_at_withdrawal) == (("a@h",), 2), drained


def test_a_cut_answer_does_not_count_the_cut_connections() -> None:
    counts = '@@connections\n|[{"name": "a@h", "connectionsOpened": 4, "connectionsClosed": 1}]\n'
    drained = parse_drain("@@found 2\n" + counts + "@@rc 0\n@@delete a@h\n@@rc 0\n", "k")
    assert drained.complete is False and drained.open_at_withdrawal is None, drained
    assert drained.open_unread is not None and "cut" in drained.open_unread


def test_the_script_asks_the_counts_before_it_deletes(tmp_path: Path) -> None:
    """Run drain.sh with a podman that prints its arguments: the query of the tcpConnectors'
    counts goes to the management listener with the local client certificate, before the
    delete of the key's connector (its name read from skrouterd.json), and only the key's."""
    import json
    import subprocess

    data = tmp_path / "data"
    router = data / "skupper" / "namespaces" / "default" / "runtime" / "router"
    router.mkdir(parents=True)
    config = [
        ["router", {"id": "x", "mode": "interior"}],
        ["listener", {"name": "skupper-local-normal", "role": "normal", "port": 5671}],
        ["tcpConnector", {"name": "connector/chat@127.0.0.1", "address": "model-pool-chat"}],
        ["tcpConnector", {"name": "connector/other@127.0.0.1", "address": "other"}],
    ]
    (router / "skrouterd.json").write_text(json.dumps(config, indent=4))
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "podman").write_text('#!/bin/sh\nprintf "%s " "$@"\n')
    (tools / "id").write_text("#!/bin/sh\necho 1000\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    env = {"PATH": f"{tools}:/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(data)}
    done = subprocess.run(
        ["sh", "-c", drain_script("default", "router; x", "model-pool-chat")],
        capture_output=True,
        text=True,
        env=env,
        timeout=20,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    asked = [line[1:].strip() for line in done.stdout.split("\n") if line.startswith("|")]
    certs = "/etc/skupper-router/runtime/certs/skupper-local-client"
    prefix = (
        f"exec router; x skmanage -b amqps://127.0.0.1:5671 -t 5 --ssl-certificate "
        f"{certs}/tls.crt --ssl-key {certs}/tls.key --ssl-trustfile {certs}/ca.crt"
    )
    assert asked == [
        f"{prefix} query --type=tcpConnector name connectionsOpened connectionsClosed",
        f"{prefix} delete --type=tcpConnector --name=connector/chat@127.0.0.1",
    ], asked
    # the fake podman's answer is no JSON: the count is unread, the delete done
    drained = parse_drain(done.stdout, "model-pool-chat")
    assert drained.deleted == ("connector/chat@127.0.0.1",) and drained.complete, drained
    assert drained.open_at_withdrawal is None and "not JSON" in (drained.open_unread or "")


class _CountedSite:
    """A member's site whose drain deleted its connector with 3 connections open."""

    def drain(self, routing_key: str) -> str:
        return f"drain {routing_key}"

    async def drained(self, routing_key: str) -> Drained:
        return Drained(("a@h",), None, True, 3)


def test_the_rows_detail_says_what_the_withdrawal_cut_and_what_a_client_does() -> None:
    import asyncio

    topo = topology(ANY_POOL)
    [target] = drain_targets(topo, "alpha", {"alpha"}, {"alpha", "beta"})
    log = DrainLog()
    withdraw, _ = drain_actions(topo, _CountedSite(), target, None, log)  # type: ignore[arg-type]

    async def withdrawing() -> str:
        return await withdraw.run()

    said = asyncio.run(withdrawing())
    assert "3 open connections closed with it" in said, said
    [row] = log.rows
    assert row.cut_connections == 3, row
    detail = row.detail or ""
    assert "3 connections were open through alpha at the withdrawal" in detail, detail
    assert "dropTcpConnections" in detail and "retries such a request and gets beta" in detail
