"""What the agent must ask hosted-model-ctl to do after an operation: which verb for which
profile on which provider. Pure. hosted-model-ctl takes profile names, never host names;
consumers and skipped providers get nothing (their SiteResult says why)."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError
from ..results import ModelAction, SiteResult
from ..topology import ProviderHost, Topology
from .predicates import STOPS


def active_profile(provider: ProviderHost, served: list[str] | None) -> str | None:
    """The active profile: the first model id the endpoint lists (in its order) that a
    profile of this host serves; None when it serves none of them. resolve_profile and
    the model actions both read this."""
    for model_id in served or []:
        profile = provider.profile_for_model(model_id)
        if profile:
            return profile
    return None


def active_or_default(topology: Topology, host: str, served: list[str] | None) -> tuple[str, str]:
    """(profile, how it was chosen): the profile whose model the host serves, else its default."""
    provider = topology.provider(host)
    if provider is None:
        raise ConfigError(f"{host!r} is not a provider host of the topology")
    profile = active_profile(provider, served)
    if profile:
        return profile, "active"
    return provider.default_profile, "default"


def model_actions(
    operation: str,
    topology: Topology,
    results: list[SiteResult],
    served: Mapping[str, list[str] | None],
    requested_profile: str | None = None,
) -> list[ModelAction]:
    """Model actions for ``operation`` (setup, up, down, teardown) from site results."""
    actions: list[ModelAction] = []
    for result in results:
        if result.role != "provider" or result.outcome == "skipped":
            continue
        host = result.host
        if operation == "setup" and result.outcome == "up":
            profile, _ = active_or_default(topology, host, None)
            why = "infrastructure is ready: deploy the default profile"
            actions.append(ModelAction(host=host, profile=profile, action="setup", reason=why))
        elif operation == "up" and result.outcome == "up":
            profile, how = requested_profile or "", "requested"
            if not requested_profile:
                profile, how = active_or_default(topology, host, served.get(host))
            why = f"{host} is up: start its {how} profile"
            actions.append(ModelAction(host=host, profile=profile, action="start", reason=why))
        elif operation in STOPS:
            profile, how = active_or_default(topology, host, served.get(host))
            then = "goes down" if operation == "down" else "is removed (stop, do not remove)"
            why = f"stop the {how} profile before its router {then}"
            actions.append(ModelAction(host=host, profile=profile, action="stop", reason=why))
    return actions


def status_actions(
    topology: Topology, reachable: Mapping[str, bool], served: Mapping[str, list[str] | None]
) -> list[ModelAction]:
    """``status`` on each reachable provider, with its active-or-default profile."""
    actions = []
    for provider in topology.providers:
        if reachable.get(provider.name):
            profile, _ = active_or_default(topology, provider.name, served.get(provider.name))
            actions.append(
                ModelAction(
                    host=provider.name,
                    profile=profile,
                    action="status",
                    reason="report the model container's state beside the network's",
                )
            )
    return actions
