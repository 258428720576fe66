"""``down``'s drain of a pool member: before its router stops, the member's connector for
the pool is withdrawn through the running router's management (``facts.drain``), and
``down`` waits, with a deadline, until the pool's port answers from the other members; only
then does the router stop.

Why: a stopped router's addresses stay routable on a router of 3.4.x for its link-state
hold (30-63 s, ``facts.router_release``), and a pool's new connections sent there fail;
a withdrawn address leaves every router on the mobile-address sync's next tick, with no
hold (``src/router_core/modules/mobile_sync/mobile.c@3.5.1:451-470,940-957``, the same
``@3.4.2``). What a drain cannot keep: the connections open through the member when its
connector goes are closed by its router (``dropTcpConnections``, default true), as its stop
would close them; a client that retries a refused request (the openai client does, twice)
gets another member.

Where a member is not drained (no other member left running, the drain refused), ``down``
says for how long the pool may send new connections to the stopped member, and why.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from ..errors import SkupperMcpError
from ..results import PoolDrain
from ..sites.podman import PodmanSite
from ..topology import ModelPool, Topology
from .listeners import consumer_hold
from .model_http import api_key, base_url, probe_models
from .readings import Reading
from .runner import Action

#: The withdrawal is sent on the mobile-address sync's next one-second tick and applied by
#: each router's core on its own: the pool's port is not trusted to have left the member
#: before this much time after the delete.
MOBILE_SYNC_SECONDS = 2.0
#: How long ``down`` waits for the other members to carry the pool before it stops the
#: router all the same (and says so).
DRAIN_DEADLINE = 15.0
#: Answers in a row through the pool's port that say the other members carry it.
CARRIED_ANSWERS = 3
POLL = 0.25


@dataclass(frozen=True)
class DrainTarget:
    """A pool one provider's ``down`` drains: the key its hub withdraws, and the members
    that keep serving it."""

    pool: ModelPool
    member: str
    routing_key: str
    others: tuple[str, ...]


def drain_targets(
    topology: Topology, host: str, stopping: set[str], running: set[str]
) -> list[DrainTarget]:
    """The pools ``host`` (a provider this down stops) can be drained from: those with
    another member running that this down does not stop. For an ``any`` pool the member's
    hub withdraws the pool's own key; for a MultiKeyListener's pool, the member's key."""
    found = []
    for pool in topology.pools:
        member = next((m for m in pool.members if m.provider == host), None)
        if member is None:
            continue
        others = tuple(
            m for m in pool.member_names() if m != host and m in running and m not in stopping
        )
        if not others:
            continue
        key = (
            pool.routing_key
            if pool.strategy == "any"
            else topology.member_endpoint(member).routing_key
        )
        found.append(DrainTarget(pool, host, key, others))
    return found


@dataclass
class DrainLog:
    """What each drain of one ``down`` did, by pool: the result's ``drains``."""

    rows: list[PoolDrain] = field(default_factory=list)
    #: members whose drain ran but whose answer was lost (the connection went, the answer
    #: was cut): some of their connectors may be gone, so a down that stops before their
    #: router does restarts it as it does one that withdrew (``updown._restore_withdrawn``)
    unsure: set[str] = field(default_factory=set)

    def add(self, row: PoolDrain) -> None:
        self.rows.append(row)

    def may_have_withdrawn(self, member: str) -> list[PoolDrain]:
        """This member's drains that withdrew, or may have, a connector."""
        return [
            d for d in self.rows if d.member == member and (d.withdrawn or member in self.unsure)
        ]


def drain_actions(
    topology: Topology,
    site: PodmanSite,
    target: DrainTarget,
    local: Reading | None,
    log: DrainLog,
) -> list[Action]:
    """The two steps before the member's router stops: ``draining`` (withdraw its key) and
    the wait until the other members carry the pool. Neither fails the down: a drain that
    could not be made is said, with how long the pool may stay degraded."""
    pool, others = target.pool, ", ".join(target.others)
    hold = consumer_hold(local)
    row = PoolDrain(pool=pool.name, member=target.member, carried_by=list(target.others))
    log.add(row)
    withdrawn_at: list[float] = []
    partly: list[str] = []
    cut_unread: list[str | None] = []

    async def withdraw() -> str:
        try:
            drained = await site.drained(target.routing_key)
        except SkupperMcpError as exc:
            # the deletes may have run before the answer was lost: not a failed down, but
            # one whose router is restarted if the down stops before it
            log.unsure.add(target.member)
            drained_problem: str | None = f"the drain's answer could not be read: {exc}"
            deleted: tuple[str, ...] = ()
        else:
            drained_problem, deleted = drained.problem, drained.deleted
            if not drained.complete:
                log.unsure.add(target.member)
            row.cut_connections = drained.open_at_withdrawal if deleted else None
            cut_unread.append(drained.open_unread)
        withdrawn_at.append(time.monotonic())
        if not deleted:
            return _undrained(
                row, drained_problem or "nothing was withdrawn", hold.seconds, hold.why
            )
        row.withdrawn = list(deleted)
        if drained_problem:
            partly.append(f"partly withdrawn: {drained_problem}")
        row.detail = _words(row, partly, cut_unread)
        return (
            f"draining: {target.routing_key} withdrawn from {target.member}'s router "
            f"({', '.join(deleted)}); {_cut_count(row.cut_connections)} closed with it"
        )

    async def wait_carried() -> str:
        if not row.withdrawn:
            return "not waited for: nothing was withdrawn"
        since = withdrawn_at[0] if withdrawn_at else time.monotonic()
        carried = await carried_by_others(topology, target, since)
        waited = time.monotonic() - since
        if carried:
            row.drained = True
            row.seconds = round(waited, 1)
            row.detail = _words(row, partly, cut_unread)
            return f"pool {pool.name} (:{pool.local_port}) answers from {others} ({waited:.1f} s)"
        said = _undrained(
            row,
            f"the pool's port did not answer from {others} within {DRAIN_DEADLINE:g} s",
            hold.seconds,
            hold.why,
        )
        row.detail = " ".join((said, _words(row, partly, cut_unread)))
        return said

    return [
        Action(
            f"drain {target.member} from pool {pool.name}",
            (site.drain(target.routing_key),),
            withdraw,
        ),
        Action(
            f"wait until {others} carry pool {pool.name}",
            (),
            wait_carried,
            changes=False,
        ),
    ]


async def carried_by_others(topology: Topology, target: DrainTarget, since: float) -> bool:
    """Whether the pool's local port answers ``GET /v1/models`` (with any HTTP status)
    CARRIED_ANSWERS times in a row, the first no sooner than MOBILE_SYNC_SECONDS after the
    withdrawal (``since``), before DRAIN_DEADLINE: the drained member has no destination
    for the key, so what answers is another member. Each answer is bounded in time and size
    (``probe_models``)."""
    import httpx

    pool = target.pool
    other = next(m for m in pool.members if m.provider == target.others[0])
    key = api_key(topology.member_endpoint(other))
    url = f"{base_url(topology.local.listener_host, pool.local_port)}/v1/models"
    deadline = since + DRAIN_DEADLINE
    in_a_row = 0
    async with httpx.AsyncClient(trust_env=False) as http:
        while time.monotonic() < deadline:
            asked_at = time.monotonic()
            probe = await probe_models(http, key, url, 2.0)
            fresh = asked_at - since >= MOBILE_SYNC_SECONDS
            # any HTTP answer is a member's (a 401 or a 503 of one loading too): the route
            # carries it; a connection closed unanswered is not
            in_a_row = in_a_row + 1 if probe.status is not None and fresh else 0
            if in_a_row >= CARRIED_ANSWERS:
                return True
            await asyncio.sleep(POLL)
    return False


def _undrained(row: PoolDrain, why: str, seconds: float, hold_why: str) -> str:
    row.drained = False
    row.degraded_for = seconds
    row.detail = (
        f"not drained ({why}): new connections to pool {row.pool} may still be sent to "
        f"{row.member} after its router stops, and fail, for up to {seconds:.0f} s ({hold_why})"
    )
    return row.detail


def _cut_count(count: int | None) -> str:
    if count is None:
        return "its open connections (not counted)"
    return f"{count} open connection{'' if count == 1 else 's'}"


def _words(row: PoolDrain, partly: list[str], unread: list[str | None]) -> str:
    """What the withdrawal cut, in words: how many connections were open through the member,
    that its router closed them and why, what a client does, and how soon new connections
    went to the others (once known)."""
    others = ", ".join(row.carried_by)
    count = row.cut_connections
    if count == 0:
        cut = f"No connection was open through {row.member} at the withdrawal: no request was cut."
    else:
        said = (
            f"{count} connection{' was' if count == 1 else 's were'} open"
            if count is not None
            else "How many connections were open could not be read "
            f"({next((u for u in unread if u), 'not asked')}); any"
        )
        them = "it" if count == 1 else "them"
        retry = (
            f"A client retries such a request and gets {others}; no need to wait."
            if row.drained is not False
            else f"A client retries such a request; until {others} carry the pool a retry "
            "may fail too."
        )
        cut = (
            f"{said} through {row.member} at the withdrawal: its router closed {them} with "
            "the connector (skrouterd's dropTcpConnections, default true), so a request in "
            f"flight on one failed. {retry}"
        )
    carried = (
        f" New connections went to {others} within {row.seconds:.1f} s."
        if row.drained and row.seconds is not None
        else ""
    )
    return " ".join((*partly, cut)) + carried
