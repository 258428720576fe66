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
    assert text.count("set -- 'team a' skupper-router model-pool-chat 8192") == 1, text
    assert "''team a''" not in text
    assert "skmanage" in text and "delete --type=tcpConnector" in text


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "@@found 1\n@@delete connector/model-pool-chat@127.0.0.1\n@@rc 0\n@@end\n",
            Drained(("connector/model-pool-chat@127.0.0.1",), None),
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
            "@@found 1\n@@delete a@h\n@@stderr\n|NotFoundStatus: No entity with name='a@h'\n"
            "@@rc 1\n@@end\n",
            Drained((), "skmanage delete a@h: NotFoundStatus: No entity with name='a@h'"),
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
