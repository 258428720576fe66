"""Model pools in ``topology.env``: one local port for a model several providers serve.

``POOLS="granite"`` declares a pool; its variables use the prefix ``POOL_<NAME>_``:

- ``POOL_GRANITE_PROVIDERS="rhel-ai rhtevan-work"``: its members in preference order, each a
  provider host (serving its default profile) or one of a provider's profiles;
- ``POOL_GRANITE_LOCAL_PORT=9100``: the listener port on the local site (required);
- ``POOL_GRANITE_ROUTING_KEY``: the shared routing key (default ``pool-<name>``);
- ``POOL_GRANITE_STRATEGY=any|priority|weighted`` (default ``any``);
- ``POOL_GRANITE_WEIGHTS="rhel-ai=3 rhtevan-work=1"`` (weighted only, default 1 each);
- ``POOL_GRANITE_CRC_PORT``: a listener on the Kubernetes site too.

``priority`` and ``weighted`` render a MultiKeyListener, which only Skupper 2.2 and newer
know: they are refused unless ``SKUPPER_MIN_VERSION`` (the release every site must run) is
2.2.0 or newer. Every problem is recorded, so one parse shows them all.
"""

from __future__ import annotations

import re
from functools import partial

from .envfile import DNS_LABEL, LABEL_RULE, Reader, excerpt
from .model import MULTI_KEY_LISTENER_SINCE, ModelPool, PoolMember, PoolStrategy, ProviderHost

POOLS_KEY = "POOLS"
POOL_SUFFIXES = ("PROVIDERS", "LOCAL_PORT", "ROUTING_KEY", "STRATEGY", "WEIGHTS", "CRC_PORT")
STRATEGIES: tuple[PoolStrategy, ...] = ("any", "priority", "weighted")
_WEIGHT = re.compile(r"[1-9][0-9]{0,5}", re.ASCII)


def pool_prefix(name: str) -> str:
    return "POOL_" + name.upper().replace("-", "_") + "_"


def pool_keys(names: list[str]) -> set[str]:
    """Every variable the declared pools may set."""
    return {POOLS_KEY} | {pool_prefix(n) + s for n in names for s in POOL_SUFFIXES}


def pool_names(reader: Reader) -> list[str]:
    """The declared pools whose names are valid; each bad one recorded."""
    names: list[str] = []
    for name in reader.words(POOLS_KEY):
        if name in names:
            reader.problems.append(reader.error(POOLS_KEY, f"lists pool {name!r} twice"))
        elif DNS_LABEL.fullmatch(name):
            names.append(name)
        else:
            reader.problems.append(
                reader.error(
                    POOLS_KEY, f"{excerpt(name)} is not valid: expected a pool name, {LABEL_RULE}"
                )
            )
    return names


def parse_pools(
    reader: Reader,
    providers: list[ProviderHost],
    min_version: tuple[int, ...],
    unparsed: set[str],
) -> list[ModelPool]:
    """Every declared pool that is valid; each problem recorded in ``reader.problems``.
    The hosts in ``unparsed`` had mistakes of their own: a member word that may be one of
    them (or one of their profiles) is passed over, not reported as unknown, so the pools'
    other mistakes (ports, keys, strategy) are still found in this run."""
    names = pool_names(reader)
    pools = [
        reader.attempt(partial(_pool, reader, n, providers, min_version, unparsed), None)
        for n in names
    ]
    return [p for p in pools if p is not None]


def _pool(
    reader: Reader,
    name: str,
    providers: list[ProviderHost],
    min_version: tuple[int, ...],
    unparsed: set[str],
) -> ModelPool | None:
    prefix = pool_prefix(name)
    before = len(reader.problems)
    strategy_text = reader.raw(prefix + "STRATEGY") or "any"
    if strategy_text not in STRATEGIES:
        reader.problems.append(
            reader.error(
                prefix + "STRATEGY",
                f"{excerpt(strategy_text)} is not a strategy: any, priority or weighted",
            )
        )
    strategy: PoolStrategy = next((s for s in STRATEGIES if s == strategy_text), "any")
    if strategy != "any" and min_version < _version(MULTI_KEY_LISTENER_SINCE):
        reader.problems.append(
            reader.error(
                prefix + "STRATEGY",
                f"strategy {strategy} needs a MultiKeyListener, which only Skupper "
                f"{MULTI_KEY_LISTENER_SINCE[:3]} and newer have: set SKUPPER_MIN_VERSION="
                f"{MULTI_KEY_LISTENER_SINCE} once every site runs it, or use strategy any",
            )
        )
    no_members: list[PoolMember] = []
    members = reader.attempt(lambda: _members(reader, prefix, providers, unparsed), no_members)
    _check_one_key(reader, prefix, members, providers)
    no_weights: dict[str, int] = {}
    weights = reader.attempt(lambda: _weights(reader, prefix, strategy, members), no_weights)
    local_port = reader.attempt(
        lambda: reader.port(prefix + "LOCAL_PORT", required=f"the local port of pool {name}"),
        None,
    )
    routing_key = reader.label(prefix + "ROUTING_KEY", f"pool-{name}")
    kube_port = reader.port(prefix + "CRC_PORT", 0) or None
    _check_names(reader, name, routing_key, providers)
    if len(reader.problems) > before:
        return None
    assert local_port is not None
    return ModelPool(
        name=name,
        local_port=local_port,
        routing_key=routing_key,
        strategy=strategy,
        members=[m.model_copy(update={"weight": weights.get(m.provider, 1)}) for m in members],
        kube_port=kube_port,
    )


def _members(
    reader: Reader, prefix: str, providers: list[ProviderHost], unparsed: set[str]
) -> list[PoolMember]:
    key = prefix + "PROVIDERS"
    words = reader.words(key)
    if len(words) < 2:
        raise reader.error(
            key, "a pool needs at least two providers (provider hosts or their profiles)"
        )
    members: list[PoolMember] = []
    for word in words:
        member = _member(word, providers)
        if member is None and unparsed:
            continue  # perhaps a host with a mistake of its own, or one of its profiles
        if member is None:
            known = ", ".join(p.name for p in providers)
            raise reader.error(key, f"{excerpt(word)} is no provider host or profile: {known}")
        if any(m.provider == member.provider for m in members):
            raise reader.error(key, f"{member.provider} is in the pool twice")
        members.append(member)
    return members


def _check_one_key(
    reader: Reader, prefix: str, members: list[PoolMember], providers: list[ProviderHost]
) -> None:
    """A pool's members share one key file (or none): a client of the pool's one port sends
    one key, and whichever member answers gets it, so members with different keys would
    each be sent the other's (the models probe and the exports send the preferred one's)."""
    by_name = {p.name: p for p in providers}
    endpoints = [by_name[m.provider].endpoint_of_profile(m.profile) for m in members]
    files = {(e.label, e.prefix): e.model_api_key_file for e in endpoints if e is not None}
    if len(set(files.values())) > 1:
        each = ", ".join(
            f"{label} {prefix}_MODEL_API_KEY_FILE={path or '(none)'}"
            for (label, prefix), path in files.items()
        )
        reader.problems.append(
            reader.error(
                prefix + "PROVIDERS",
                f"the members have different model API keys ({each}): a client of the "
                "pool's one port sends one key, which any member may receive; give them "
                "the same key file, or no pool",
            )
        )


def _member(word: str, providers: list[ProviderHost]) -> PoolMember | None:
    for p in providers:
        if word == p.name:
            return PoolMember(provider=p.name, profile=p.default_profile)
        if word in p.profiles:
            return PoolMember(provider=p.name, profile=word)
    return None


def _weights(
    reader: Reader, prefix: str, strategy: PoolStrategy, members: list[PoolMember]
) -> dict[str, int]:
    key = prefix + "WEIGHTS"
    words = reader.words(key)
    if words and strategy != "weighted":
        raise reader.error(key, f"weights are for strategy weighted, not {strategy}")
    weights: dict[str, int] = {}
    names = {m.provider for m in members}
    for word in words:
        host, sep, value = word.partition("=")
        if not sep or not _WEIGHT.fullmatch(value):
            raise reader.error(key, f"{excerpt(word)}: expected provider=weight, weight >= 1")
        if host not in names:
            raise reader.error(key, f"{host!r} is not in the pool: {', '.join(sorted(names))}")
        weights[host] = int(value)
    return weights


def _check_names(
    reader: Reader, name: str, routing_key: str, providers: list[ProviderHost]
) -> None:
    """A pool is a TARGET and its key a Connector's name: neither may be a provider's."""
    for p in providers:
        if name == p.name or name in p.profiles:
            reader.problems.append(
                reader.error(POOLS_KEY, f"pool {name!r} has the name of a host or profile")
            )
        for e in p.endpoints:
            if routing_key == e.routing_key:
                reader.problems.append(
                    reader.error(
                        pool_prefix(name) + "ROUTING_KEY",
                        f"{routing_key!r} is {e.label}'s own routing key; a pool needs its own",
                    )
                )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def check_pool_ports(
    reader: Reader, pools: list[ModelPool], taken: dict[int, str], kube_taken: dict[int, str]
) -> None:
    """A pool's ports are its own: no provider's listener, no other pool's."""
    for pool in pools:
        key = pool_prefix(pool.name) + "LOCAL_PORT"
        if pool.local_port in taken:
            reader.problems.append(
                reader.error(
                    key,
                    f"local port {pool.local_port} is already used by {taken[pool.local_port]}",
                )
            )
        taken.setdefault(pool.local_port, f"pool {pool.name}")
        if pool.kube_port is None:
            continue
        if pool.kube_port in kube_taken:
            reader.problems.append(
                reader.error(
                    pool_prefix(pool.name) + "CRC_PORT",
                    f"Kubernetes listener port {pool.kube_port} is already used for "
                    f"{kube_taken[pool.kube_port]}",
                )
            )
        kube_taken.setdefault(pool.kube_port, f"pool {pool.name}")
