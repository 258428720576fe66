"""``test_model POOL``: a model pool checked end to end.

Through the pool's one local port the four route checks (port, health, a model id of one of
its members' profiles, a chat completion); then, for each member, whether its own route
answers (``/v1/models`` through its own local listener), so the result says which backends
the pool can fail over to, and which one answered.
"""

from __future__ import annotations

import asyncio

from ...results import ModelCheck, TestModelResult
from ...topology import ModelPool, PoolMember, Topology
from .model_checks import route_checks


async def run(topology: Topology, pool: ModelPool) -> TestModelResult:
    host = topology.local.listener_host
    wanted = [_model_id(topology, m) for m in pool.members]
    route, members = await asyncio.gather(
        route_checks(host, pool.local_port, wanted),
        asyncio.gather(*(_member_check(topology, m) for m in pool.members)),
    )
    checks = [*route, *members]
    served = next(
        (c.detail.split("serves ")[-1] for c in route if c.name == "model id" and c.passed), ""
    )
    answering = next((m for m in pool.members if _model_id(topology, m) == served), None)
    return TestModelResult(
        target=pool.name,
        host=answering.provider if answering else pool.members[0].provider,
        profile=answering.profile if answering else pool.members[0].profile,
        checks=checks,
        passed=sum(c.passed for c in checks),
        total=len(checks),
    )


def _model_id(topology: Topology, member: PoolMember) -> str:
    return topology.member_endpoint(member).profiles[member.profile]


async def _member_check(topology: Topology, member: PoolMember) -> ModelCheck:
    """Whether the member's own route serves its model: the backend the pool can use (its
    profile's model endpoint)."""
    provider = topology.member_endpoint(member)
    checks = await route_checks(
        topology.local.listener_host, provider.local_port, [_model_id(topology, member)]
    )
    failed = next((c for c in checks[:3] if not c.passed), None)
    name = f"backend {member.provider}"
    if failed is None:
        return ModelCheck(
            name=name,
            passed=True,
            detail=f"{checks[2].detail} on :{provider.local_port}",
            seconds=round(sum(c.seconds for c in checks), 3),
        )
    return ModelCheck(
        name=name,
        passed=False,
        detail=f"{failed.name}: {failed.detail}",
        seconds=round(sum(c.seconds for c in checks), 3),
    )
