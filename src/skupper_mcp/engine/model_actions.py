"""What the agent must ask hosted-model-ctl to do after an operation: which verb for which
profile on which provider. Pure. hosted-model-ctl takes profile names, never host names;
consumers and skipped providers get nothing (their SiteResult says why)."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError
from ..results import ModelAction, SiteResult
from ..topology import ModelEndpoint, ProviderHost, Topology
from .predicates import STOPS


def active_profile(provider: ProviderHost | ModelEndpoint, served: list[str] | None) -> str | None:
    """The active profile: the first model id the endpoint lists (in its order) that a
    profile of this host serves; None when it serves none of them. resolve_profile and
    the model actions both read this."""
    for model_id in served or []:
        profile = provider.profile_for_model(model_id)
        if profile:
            return profile
    return None


def active_or_default(topology: Topology, label: str, served: list[str] | None) -> tuple[str, str]:
    """(profile, how it was chosen): the profile whose model the endpoint (``HOST`` or
    ``HOST/ENDPOINT``; a host with endpoints by its name: its first) serves, else its
    default."""
    provider = topology.provider(label.partition("/")[0])
    endpoint = topology.model_endpoint(label)
    if provider is None:
        raise ConfigError(f"{label!r} is not a provider host of the topology")
    if endpoint is None:
        endpoint = provider.endpoints[0]
    profile = active_profile(endpoint, served)
    if profile:
        return profile, "active"
    return endpoint.default_profile, "default"


def model_actions(
    operation: str,
    topology: Topology,
    results: list[SiteResult],
    served: Mapping[str, list[str] | None],
    requested_profile: str | None = None,
    requested_endpoint: str | None = None,
    *,
    planned: bool = True,
) -> list[ModelAction]:
    """Model actions for ``operation`` (setup, up, down, teardown) from site results: one
    per model endpoint of each provider (``served`` by endpoint label), each naming that
    endpoint's profile; a requested profile (or endpoint, ``HOST/ENDPOINT``) starts on its
    own endpoint only. A stop names every endpoint: the whole host's router goes; its
    reason says "before" for a plan (``planned``), and what is already done after a run."""
    actions: list[ModelAction] = []
    for result in results:
        if result.role != "provider" or result.outcome == "skipped":
            continue
        provider = topology.provider(result.host)
        if provider is None:
            continue
        for e in provider.endpoints:
            if operation == "up" and requested_endpoint not in (None, e.label):
                continue
            action = _action(operation, topology, e, result, served, requested_profile, planned)
            if action is not None:
                actions.append(action)
    return actions


def _action(
    operation: str,
    topology: Topology,
    e: ModelEndpoint,
    result: SiteResult,
    served: Mapping[str, list[str] | None],
    requested_profile: str | None,
    planned: bool = True,
) -> ModelAction | None:
    host, endpoint = e.host, (e.label if e.name else None)
    if operation == "setup" and result.outcome == "up":
        profile, _ = active_or_default(topology, e.label, None)
        why = "infrastructure is ready: deploy the default profile"
        return ModelAction(
            host=host, profile=profile, action="setup", reason=why, endpoint=endpoint
        )
    if operation == "up" and result.outcome == "up":
        elsewhere = any(requested_profile in o.profiles for o in _siblings(topology, e))
        if requested_profile and requested_profile not in e.profiles and elsewhere:
            return None  # it starts on its own endpoint
        profile, how = requested_profile or "", "requested"
        if not requested_profile:
            profile, how = active_or_default(topology, e.label, served.get(e.label))
        why = f"{e.label} is up: start its {how} profile"
        return ModelAction(
            host=host, profile=profile, action="start", reason=why, endpoint=endpoint
        )
    if operation in STOPS:
        profile, how = active_or_default(topology, e.label, served.get(e.label))
        why = _stop_reason(operation, how, planned)
        return ModelAction(host=host, profile=profile, action="stop", reason=why, endpoint=endpoint)
    return None


def _stop_reason(operation: str, how: str, planned: bool) -> str:
    """Why stop the profile: before the router goes (a plan), or because it went (a run,
    whose router is already down: "before" would ask for what can no longer be done)."""
    if planned:
        then = "goes down" if operation == "down" else "is removed (stop, do not remove)"
        return f"stop the {how} profile before its router {then}"
    done = "is down" if operation == "down" else "is removed"
    return f"its router {done}: stop the {how} profile too (do not remove it)"


def _siblings(topology: Topology, e: ModelEndpoint) -> list[ModelEndpoint]:
    provider = topology.provider(e.host)
    return [o for o in provider.endpoints if o != e] if provider else []


def status_actions(
    topology: Topology, reachable: Mapping[str, bool], served: Mapping[str, list[str] | None]
) -> list[ModelAction]:
    """``status`` on each reachable provider's every model endpoint, with its
    active-or-default profile."""
    actions = []
    for e in topology.model_endpoints():
        if reachable.get(e.host):
            profile, _ = active_or_default(topology, e.label, served.get(e.label))
            actions.append(
                ModelAction(
                    host=e.host,
                    profile=profile,
                    action="status",
                    reason="report the model container's state beside the network's",
                    endpoint=e.label if e.name else None,
                )
            )
    return actions
