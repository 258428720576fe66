"""Rules about model pools: members that serve different models behind one port."""

from __future__ import annotations

from collections.abc import Iterator

from ...facts.model_endpoint import quoted_ids
from ...results import Finding, NextStep
from ...topology.pools import pool_prefix
from ...vocabulary import LOCAL_HOST
from ..pools import mixed_ids, mixed_words
from ..scope import site_ref
from .context import Network, call, finding, model_ctl, set_variable


def pool_mixed_model_ids(network: Network) -> Iterator[Finding]:
    """A pool whose members serve different model ids (``pools.mixed_ids``, the judgement
    the pool's models row says too): a client of the pool's port gets one model or the
    other, and an export labels both with one name."""
    topo = network.topology
    for pool in topo.pools:
        served = []
        wanted = {}
        for member in pool.members:
            endpoint = topo.member_endpoint(member)
            served.append((member.provider, network.served.get(endpoint.label) or []))
            wanted[member.provider] = (member.profile, endpoint.profiles.get(member.profile))
        found = mixed_ids(served)
        if found is None:
            continue
        steps: list[NextStep] = [
            model_ctl("start", profile, provider)
            for provider, ids in found
            for profile, model in [wanted[provider]]
            if model is not None and model not in ids
        ]
        steps += [
            set_variable(
                network,
                pool_prefix(pool.name) + "PROVIDERS",
                None,
                "members that serve one model",
            ),
            call("test_model", target=pool.name),
        ]
        yield finding(
            "pool-mixed-model-ids",
            site_ref(topo, LOCAL_HOST),
            "warning",
            symptom=f"pool {pool.name} (:{pool.local_port}) sends each connection to one of "
            f"members that serve different models ({mixed_words(found)}): a client gets "
            "whichever model answers",
            evidence=[_served_words(provider, ids, *wanted[provider]) for provider, ids in found],
            cause="a pool spreads connections over its members whatever model a request "
            "names: the router does not read the request, so a request for one model id may "
            "reach a member that serves another, and a client configuration exported for the "
            "pool names one model for the replies of both",
            fix="serve the same model on every member (start the pool's profile on the member "
            "that serves another with hosted-model-ctl), or keep only members that serve one "
            f"model in {pool_prefix(pool.name)}PROVIDERS; then test_model the pool",
            next=steps,
        )


def _served_words(provider: str, ids: list[str], profile: str, model: str | None) -> str:
    named = quoted_ids([model]) if model is not None else "no model"
    return f"{provider} serves {quoted_ids(ids)}; its profile {profile} in the pool names {named}"


POOL_RULES = (pool_mixed_model_ids,)
