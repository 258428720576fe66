"""Building a ``Topology`` from ``topology.env``'s text, and everything it is checked for:
required and well-formed values, unknown variables (with a did-you-mean), and names, ports
and profiles that must be unique. Every problem is a ``ConfigError`` naming the file, the
line, the variable and what would be valid. Nothing here touches the network or runs
anything."""

from __future__ import annotations

import difflib
import re
from functools import partial
from pathlib import Path
from typing import get_args

from pydantic import ValidationError

from skupper_mcp.connectors.base import DEFAULT_CONNECT_TIMEOUT, SSHTarget
from skupper_mcp.errors import ConfigError, ConfigErrors
from skupper_mcp.vocabulary import KUBE_HOST, LOCAL_HOST, MODEL_KINDS, ModelKind

from .envfile import DNS_LABEL, LABEL_RULE, SAFE_PATH, Reader, excerpt, parse_assignments
from .model import (
    DEFAULT_MIN_SKUPPER_VERSION,
    DEFAULT_SATURATED_WAITING,
    KubeSite,
    LocalSite,
    ModelEndpoint,
    ModelPool,
    ProviderHost,
    SSHSettings,
    Topology,
    default_state_dir,
)
from .pools import check_pool_ports, parse_pools, pool_keys, pool_prefix

_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", re.ASCII)
# A routing key is also the name of its Listener and Connector, which Skupper's non-kube
# validator accepts only as RFC 1123 labels ("invalid listener name" / "invalid connector
# name" at system start: internal/nonkube/common/site_state_validator.go@2.1.2:16,135,159).
_ROUTING_KEY = DNS_LABEL
_ROUTING_KEY_RULE = (
    "an RFC 1123 label, because it names the Skupper Listener and Connector (lowercase "
    "letters, digits and '-', starting and ending with a letter or digit, 1-63 characters)"
)
_CONTAINER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}", re.ASCII)
DEFAULT_MODEL_CONTAINER = "hosted-model"
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}", re.ASCII)
_CONTEXT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,252}", re.ASCII)
_VERSION = re.compile(r"([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,4}))?", re.ASCII)
_KIND = re.compile("|".join(MODEL_KINDS))
_NUMBER = re.compile(r"[0-9]{1,4}(\.[0-9]{1,3})?", re.ASCII)

# Variables that belong to no host.
_WHOLE = re.compile(r"[1-9][0-9]{0,5}")
_GLOBAL_KEYS = {
    "PROVIDER_HOSTS",
    "SSH_IDENTITY",
    "SSH_KNOWN_HOSTS",
    "SSH_CONFIG",
    "SSH_ACCEPT_NEW_HOST_KEYS",
    "SSH_CONNECT_TIMEOUT",
    "SKUPPER_MIN_VERSION",
    "MODEL_SATURATED_WAITING",
    "STATE_DIR",
}
_PROVIDER_SUFFIXES = (
    "SSH_HOST",
    "SSH_USER",
    "SSH_PORT",
    "PUBLIC_HOST",
    "INTER_ROUTER_PORT",
    "EDGE_PORT",
    "SANS",
    "SITE_NAME",
    "NAMESPACE",
    "TMPFS_WORKAROUND",
    "ENDPOINTS",
)
#: A model endpoint's variables: <PREFIX>_<SUFFIX> in the single-port form,
#: <PREFIX>_<ENDPOINT>_<SUFFIX> for each name of <PREFIX>_ENDPOINTS.
ENDPOINT_SUFFIXES = (
    "MODEL_HOST",
    "MODEL_PORT",
    "LOCAL_PORT",
    "ROUTING_KEY",
    "PROFILES",
    "DEFAULT_PROFILE",
    "MODEL_CONTAINER",
    "MODEL_API_KEY_FILE",
    "MODEL_KIND",
)
_LOCAL_SUFFIXES = (
    "SITE_NAME",
    "NAMESPACE",
    "INTER_ROUTER_PORT",
    "EDGE_PORT",
    "PUBLIC_HOST",
    "SANS",
    "LISTENER_HOST",
    "SSH_HOST",
    "SSH_USER",
    "SSH_PORT",
)
_KUBE_SUFFIXES = (
    "SITE_NAME",
    "NAMESPACE",
    "CONTEXT",
    "KUBECONFIG",
    "MODEL_PORT",
    "ROUTING_KEY",
    "DIRECT_LINKS",
)


def prefix_of(name: str) -> str:
    """The variable prefix of a host name: rhel-ai -> RHEL_AI."""
    return name.upper().replace("-", "_")


def parse_topology(text: str, path: Path | str = "topology.env") -> Topology:
    """Parse and validate topology text. Raises ``ConfigError`` on any problem; when the
    file has several independent ones, a ``ConfigErrors`` that lists them all, so one run
    shows every mistake: each line, each variable with a default, each host and site is
    checked even after another failed."""
    path_str = str(path)
    problems: list[ConfigError] = []
    assignments = parse_assignments(text, path_str, problems)
    reader = Reader(assignments, path_str, problems)
    base = Path(path).parent
    provider_names: list[str] = reader.attempt(lambda: _provider_names(reader), [])
    _reject_unknown(reader, provider_names)
    # every endpoint that parsed, even of a host with another mistake, so that the checks
    # across hosts (ports, keys, profiles) report theirs in this same run, not the next
    endpoints: list[ModelEndpoint] = []
    parsed = {
        n: reader.attempt(partial(_provider, reader, n, endpoints), None) for n in provider_names
    }
    providers = [p for p in parsed.values() if p]
    unparsed = {n for n, p in parsed.items() if p is None}
    if not provider_names and not reader.has("PROVIDER_HOSTS"):
        problems.append(
            ConfigError(
                "no provider hosts: set PROVIDER_HOSTS or <PREFIX>_SSH_HOST for each GPU host",
                path=path_str,
                variable="PROVIDER_HOSTS",
            )
        )
    local = reader.attempt(lambda: _local_site(reader), None)
    kube = None
    if providers:
        kube = reader.attempt(lambda: _kube_site(reader, providers, base, unparsed), None)
    ssh = reader.attempt(lambda: _ssh_settings(reader, base), None)
    min_version = reader.text(
        "SKUPPER_MIN_VERSION", DEFAULT_MIN_SKUPPER_VERSION, _VERSION, "a version like 2.1.0"
    )
    state_dir = reader.path_value("STATE_DIR", base) or default_state_dir()
    saturated = int(
        reader.text(
            "MODEL_SATURATED_WAITING",
            str(DEFAULT_SATURATED_WAITING),
            _WHOLE,
            "a whole number of waiting requests, 1 or more",
        )
    )
    pools = parse_pools(reader, providers, _version_tuple(min_version), unparsed)
    for pool in pools:
        if pool.kube_port is not None and not any(k.startswith("CRC_") for k in reader.assignments):
            problems.append(
                reader.error(
                    pool_prefix(pool.name) + "CRC_PORT", "needs the Kubernetes site (CRC_...)"
                )
            )
    _check_unique(reader, provider_names, providers, endpoints, local, kube, pools)
    if problems:
        problems.sort(key=lambda p: (p.line is None, p.line or 0))
        raise problems[0] if len(problems) == 1 else ConfigErrors(problems)
    if not providers:
        raise ConfigError(
            "no provider hosts: set PROVIDER_HOSTS or <PREFIX>_SSH_HOST for each GPU host",
            path=path_str,
            variable="PROVIDER_HOSTS",
        )
    assert local is not None and ssh is not None  # else a problem was recorded
    try:
        return Topology(
            path=Path(path),
            providers=providers,
            local=local,
            kubernetes=kube,
            pools=pools,
            ssh=ssh,
            min_skupper_version=min_version,
            state_dir=state_dir,
            saturated_waiting=saturated,
        )
    except ValidationError as error:  # a bug in the checks above, reported as config
        raise ConfigError(f"invalid topology: {error}", path=path_str) from error


def _provider_names(reader: Reader) -> list[str]:
    if reader.has("PROVIDER_HOSTS"):
        names = reader.words("PROVIDER_HOSTS")
        for name in names:
            reader.check("PROVIDER_HOSTS", name, DNS_LABEL, LABEL_RULE)
            if name in (LOCAL_HOST, KUBE_HOST):
                raise reader.error("PROVIDER_HOSTS", f"{name!r} is reserved for a consumer site")
        if len(set(names)) != len(names):
            raise reader.error("PROVIDER_HOSTS", "lists a host twice")
        return names
    inferred = []
    for key in reader.assignments:
        if key.endswith("_SSH_HOST") and not key.startswith(("LOCAL_", "CRC_")):
            prefix = key[: -len("_SSH_HOST")]
            name = prefix.lower().replace("_", "-")
            if not DNS_LABEL.fullmatch(name):
                raise reader.error(key, f"the host name {name!r} is not {LABEL_RULE}")
            inferred.append(name)
    return inferred


def _split_user(reader: Reader, key: str, value: str) -> tuple[str | None, str]:
    user, at, host = value.rpartition("@")
    if not at:
        return None, value
    reader.check(key, user, _USER, "user@host with a plain user name")
    return user, host


def _ssh_target(reader: Reader, prefix: str, host_value: str) -> SSHTarget:
    user, host = _split_user(reader, f"{prefix}_SSH_HOST", host_value)
    reader.check_host(f"{prefix}_SSH_HOST", host)
    explicit_user = reader.text(f"{prefix}_SSH_USER", "", _USER, "a user name")
    # unset, the port is the SSH config's for this host (else 22), as for ssh itself
    port_key = f"{prefix}_SSH_PORT"
    port = reader.port(port_key, 22) if reader.raw(port_key) else None
    return SSHTarget(host=host, port=port, user=explicit_user or user)


def _provider(reader: Reader, name: str, parsed: list[ModelEndpoint]) -> ProviderHost | None:
    """One provider host's variables, or None when any of them is wrong. Every variable is
    read even after one failed, so each of the host's mistakes is a problem of its own; each
    endpoint that parsed is added to ``parsed`` all the same, for the checks across hosts."""
    p = prefix_of(name)
    before = len(reader.problems)

    def required_port(key: str, what: str) -> int | None:
        return reader.attempt(lambda: reader.port(key, required=what), None)

    ssh_host = reader.attempt(
        lambda: reader.required(f"{p}_SSH_HOST", f"the SSH host of {name}"), None
    )
    ssh = reader.attempt(lambda: _ssh_target(reader, p, ssh_host), None) if ssh_host else None
    public_host = reader.attempt(
        lambda: reader.host(f"{p}_PUBLIC_HOST", required=f"the address peers dial for {name}"),
        None,
    )
    inter_router = required_port(f"{p}_INTER_ROUTER_PORT", f"the inter-router port of {name}")
    edge_default = inter_router + 1 if inter_router and inter_router < 65535 else 1
    edge = reader.port(f"{p}_EDGE_PORT", edge_default)
    if inter_router is not None and edge == inter_router:
        reader.problems.append(
            reader.error(f"{p}_EDGE_PORT", "must differ from the inter-router port")
        )
    sans = _sans(reader, f"{p}_SANS", public_host)
    site_name = reader.label(f"{p}_SITE_NAME", f"hub-{name}")
    namespace = reader.label(f"{p}_NAMESPACE", "default")
    endpoints = reader.attempt(lambda: _endpoints(reader, name, parsed), None)
    tmpfs_workaround = reader.boolean(f"{p}_TMPFS_WORKAROUND", False)
    if len(reader.problems) > before:
        return None
    assert ssh and public_host and inter_router and endpoints
    first = endpoints[0]
    return ProviderHost(
        name=name,
        prefix=p,
        ssh=ssh,
        public_host=public_host,
        inter_router_port=inter_router,
        edge_port=edge,
        model_port=first.model_port,
        sans=sans,
        site_name=site_name,
        namespace=namespace,
        model_host=first.model_host,
        local_port=first.local_port,
        routing_key=first.routing_key,
        profiles={k: v for e in endpoints for k, v in e.profiles.items()},
        default_profile=first.default_profile,
        model_container=first.model_container,
        model_api_key_file=first.model_api_key_file,
        tmpfs_workaround=tmpfs_workaround,
        endpoints=endpoints,
    )


def endpoint_names(reader: Reader, host: str) -> list[str] | None:
    """The names ``<PREFIX>_ENDPOINTS`` lists, or None for the single-port form."""
    key = f"{prefix_of(host)}_ENDPOINTS"
    if not reader.has(key):
        return None
    names = reader.words(key)
    if not names:
        raise reader.error(key, "lists no endpoint; name each model server (chat embed)")
    for word in names:  # each bad name a problem; the good ones are still read
        if not DNS_LABEL.fullmatch(word):
            reader.problems.append(
                reader.error(
                    key,
                    f"{excerpt(word)} is not valid: expected an endpoint name that is {LABEL_RULE}",
                )
            )
    if len(set(names)) != len(names):
        reader.problems.append(reader.error(key, "lists an endpoint twice"))
    return [n for n in dict.fromkeys(names) if DNS_LABEL.fullmatch(n)]


def _endpoints(
    reader: Reader, host: str, parsed: list[ModelEndpoint]
) -> list[ModelEndpoint] | None:
    """A host's model endpoints: one from ``<PREFIX>_MODEL_PORT`` ... (single-port form), or
    one per name of ``<PREFIX>_ENDPOINTS`` from ``<PREFIX>_<ENDPOINT>_MODEL_PORT`` ...
    Each is read even after another failed (and added to ``parsed``); None when any failed."""
    p = prefix_of(host)
    names = endpoint_names(reader, host)
    if names is None:
        single = _one_endpoint(reader, host, None, p, p)
        parsed.extend([single] if single else [])
        return [single] if single else None
    for suffix in ENDPOINT_SUFFIXES:
        if reader.has(f"{p}_{suffix}") and suffix != "MODEL_HOST":
            reader.problems.append(
                reader.error(
                    f"{p}_{suffix}",
                    f"with {p}_ENDPOINTS each endpoint has its own: set "
                    f"{p}_<ENDPOINT>_{suffix} ({p}_{prefix_of(names[0])}_{suffix})",
                )
            )
    found = [
        _one_endpoint(reader, host, n, f"{p}_{prefix_of(n)}", p, i) for i, n in enumerate(names)
    ]
    good = [e for e in found if e is not None]
    parsed.extend(good)
    _check_endpoints(reader, good)
    return good if len(good) == len(found) and names else None


def _one_endpoint(
    reader: Reader, host: str, name: str | None, ep: str, p: str, index: int = 0
) -> ModelEndpoint | None:
    before = len(reader.problems)
    what = f"{host}/{name}" if name else host
    model_port = reader.attempt(
        lambda: reader.port(f"{ep}_MODEL_PORT", required=f"the model API port of {what}"), None
    )
    profiles = reader.attempt(lambda: _profiles(reader, f"{ep}_PROFILES", what), None)
    default_profile = reader.label(
        f"{ep}_DEFAULT_PROFILE", next(iter(profiles)) if profiles else ""
    )
    if profiles and default_profile not in profiles:
        reader.problems.append(
            reader.error(
                f"{ep}_DEFAULT_PROFILE",
                f"{default_profile!r} is not one of {what}'s profiles: {', '.join(profiles)}",
            )
        )
    model_host = reader.host(
        f"{ep}_MODEL_HOST", reader.host(f"{p}_MODEL_HOST", "127.0.0.1") if name else "127.0.0.1"
    )
    local_port = reader.port(f"{ep}_LOCAL_PORT", model_port or 1)
    default_key = f"model-api-{host}" + (f"-{name}" if name else "")
    routing_key = reader.text(f"{ep}_ROUTING_KEY", default_key, _ROUTING_KEY, _ROUTING_KEY_RULE)
    container_default = DEFAULT_MODEL_CONTAINER + (f"-{name}" if name else "")
    model_container = _model_container(reader, f"{ep}_MODEL_CONTAINER", container_default)
    key_file = reader.attempt(lambda: _key_file(reader, f"{ep}_MODEL_API_KEY_FILE"), None)
    kind_text = reader.text(f"{ep}_MODEL_KIND", "", _KIND, "one of " + ", ".join(MODEL_KINDS))
    kind = next((k for k in get_args(ModelKind) if k == kind_text), None)
    if len(reader.problems) > before:
        return None
    assert model_port and profiles
    return ModelEndpoint(
        host=host,
        name=name,
        index=index,
        prefix=ep,
        model_host=model_host,
        model_port=model_port,
        local_port=local_port,
        routing_key=routing_key,
        profiles=profiles,
        default_profile=default_profile,
        model_container=model_container,
        model_api_key_file=key_file,
        kind=kind,
    )


def _model_container(reader: Reader, key: str, default: str) -> str | None:
    """The container that serves the model: ``hosted-model`` (``hosted-model-<endpoint>``)
    when the variable is absent, None when it is set empty (the model is served some other
    way: a systemd unit, docker, a bare process)."""
    if not reader.has(key):
        return default
    if reader.raw(key) == "":
        return None
    return reader.text(key, default, _CONTAINER, "a container name")


def _key_file(reader: Reader, key: str) -> Path | None:
    """The path of the file holding the model API key; the file is not read here (it may
    not exist yet where the topology is checked, and the key never belongs in a parse)."""
    value = reader.raw(key)
    if not value:
        return None
    if not value.startswith(("/", "~")):
        raise reader.error(
            key, f"{excerpt(value)} is not valid: expected an absolute or ~/ path to the key file"
        )
    return reader.resolve_path(key, value, Path("/"))


def _profiles(reader: Reader, key: str, host: str) -> dict[str, str]:
    words = reader.words(key)
    if not words:
        raise ConfigError(
            f'required: the profiles {host} can serve, "profile=model-id ..."',
            path=reader.path,
            variable=key,
        )
    profiles: dict[str, str] = {}
    for word in words:
        name, sep, model_id = word.partition("=")
        if not sep:
            raise reader.error(key, f"{excerpt(word)}: expected profile=model-id")
        reader.check(key, name, DNS_LABEL, f"a profile name that is {LABEL_RULE}")
        reader.check(key, model_id, _MODEL_ID, "a model id (letters, digits, . _ : / @ + -)")
        if name in profiles:
            raise reader.error(key, f"profile {name!r} is listed twice")
        profiles[name] = model_id
    return profiles


def _sans(reader: Reader, key: str, public_host: str | None) -> list[str]:
    sans = [reader.check_host(key, s) for s in reader.words(key)]
    if not sans and public_host:
        sans = [public_host]
    return sans


def _local_site(reader: Reader) -> LocalSite:
    ssh = None
    ssh_host = reader.raw("LOCAL_SSH_HOST")
    if ssh_host:
        ssh = _ssh_target(reader, "LOCAL", ssh_host)
    else:
        for key in ("LOCAL_SSH_PORT", "LOCAL_SSH_USER"):
            if reader.raw(key):
                raise reader.error(key, "needs LOCAL_SSH_HOST; without it local commands run")
    inter_router = reader.port("LOCAL_INTER_ROUTER_PORT", 55671)
    edge = reader.port("LOCAL_EDGE_PORT", 45671)
    if edge == inter_router:
        raise reader.error("LOCAL_EDGE_PORT", "must differ from LOCAL_INTER_ROUTER_PORT")
    public_host = reader.host("LOCAL_PUBLIC_HOST", "") or None
    return LocalSite(
        site_name=_required_label(
            reader, "LOCAL_SITE_NAME", "the local site's name (e.g. local-<user>)"
        ),
        namespace=reader.label("LOCAL_NAMESPACE", "default"),
        inter_router_port=inter_router,
        edge_port=edge,
        public_host=public_host,
        sans=_sans(reader, "LOCAL_SANS", public_host),
        listener_host=reader.host("LOCAL_LISTENER_HOST", "127.0.0.1"),
        ssh=ssh,
    )


def _missing(reader: Reader, key: str, what: str) -> str:
    raise ConfigError(f"required: {what}", path=reader.path, variable=key)


def _required_label(reader: Reader, key: str, what: str) -> str:
    """A required name; an invalid one is recorded and stands in as "invalid" so the rest of
    the file is still checked (the recorded problem fails the parse)."""
    if not reader.raw(key):
        return _missing(reader, key, what)
    return reader.label(key, "invalid")


_KUBE_PORT = re.compile(r"CRC_([A-Z0-9_]+?)(_MODEL)?_PORT", re.ASCII)


def _kube_site(
    reader: Reader, providers: list[ProviderHost], base: Path, unparsed: set[str]
) -> KubeSite | None:
    """The Kubernetes site, or None without CRC_ variables. A host in ``unparsed`` had a
    mistake of its own: what names it (or a key of it) is not reported again here."""
    keys = [k for k in reader.assignments if k.startswith("CRC_")]
    if not keys:
        return None
    site_name = _required_label(
        reader, "CRC_SITE_NAME", "the Kubernetes site's name, since CRC_ variables are set"
    )
    by_name = {p.name: p for p in providers}
    endpoints = [e for p in providers for e in p.endpoints]
    listeners: dict[str, int] = {}
    listener_keys: dict[str, str] = {}

    def add(label: str, key: str) -> None:
        if label in listeners:
            reader.problems.append(
                reader.error(key, f"{label} already has a listener from {listener_keys[label]}")
            )
            return
        listeners[label] = reader.attempt(lambda: reader.port(key), 0)
        listener_keys[label] = key

    if reader.has("CRC_MODEL_PORT"):
        key = reader.raw("CRC_ROUTING_KEY")
        owners = [e for e in endpoints if e.routing_key == key] if key else endpoints[:1]
        if owners:
            add(owners[0].label, "CRC_MODEL_PORT")
        elif not unparsed:
            keys_known = ", ".join(e.routing_key for e in endpoints)
            reader.problems.append(
                reader.error("CRC_ROUTING_KEY", f"{key!r} is no provider's: {keys_known}")
            )
    elif reader.raw("CRC_ROUTING_KEY"):
        reader.problems.append(
            reader.error("CRC_ROUTING_KEY", "needs CRC_MODEL_PORT, the listener's port")
        )
    by_prefix = {e.prefix: e.label for e in endpoints}
    for key in keys:
        match = _KUBE_PORT.fullmatch(key)
        if key == "CRC_MODEL_PORT" or not match:
            continue
        prefix = _prefix_by_short_name(list(by_prefix), match.group(1))
        if prefix is not None:
            add(by_prefix[prefix], key)
    direct = reader.words("CRC_DIRECT_LINKS") or [providers[0].name]
    for name in direct:
        if name not in by_name and name not in unparsed:
            reader.problems.append(
                reader.error(
                    "CRC_DIRECT_LINKS", f"{name!r} is not a provider host: {', '.join(by_name)}"
                )
            )
    return KubeSite(
        site_name=site_name,
        namespace=reader.label("CRC_NAMESPACE", "default"),
        kubeconfig=reader.path_value("CRC_KUBECONFIG", base),
        context=reader.text("CRC_CONTEXT", "", _CONTEXT, "a kubeconfig context name") or None,
        listeners={label: port for label, port in listeners.items() if port},
        direct_links=[name for name in direct if name in by_name],
    )


def _prefix_by_short_name(prefixes: list[str], short: str) -> str | None:
    """The provider prefix a CRC_<short>_PORT variable names."""
    if short in prefixes:
        return short
    # e.g. CRC_RHTEVAN_MODEL_PORT names rhtevan-work by its first word
    leading = [p for p in prefixes if p.startswith(short + "_")]
    return leading[0] if len(leading) == 1 else None


def _ssh_settings(reader: Reader, base: Path) -> SSHSettings:
    identities = []
    for word in reader.words("SSH_IDENTITY"):
        reader.check("SSH_IDENTITY", word, SAFE_PATH, "file paths separated by spaces")
        identities.append(reader.resolve_path("SSH_IDENTITY", word, base))
    timeout_text = reader.raw("SSH_CONNECT_TIMEOUT")
    timeout = DEFAULT_CONNECT_TIMEOUT
    if timeout_text:
        if not _NUMBER.fullmatch(timeout_text) or float(timeout_text) <= 0:
            raise reader.error("SSH_CONNECT_TIMEOUT", "expected seconds, a positive number")
        timeout = float(timeout_text)
    return SSHSettings(
        identity_files=identities,
        known_hosts=reader.path_value("SSH_KNOWN_HOSTS", base),
        ssh_config=reader.path_value("SSH_CONFIG", base),
        accept_new_host_keys=reader.boolean("SSH_ACCEPT_NEW_HOST_KEYS", False),
        connect_timeout=timeout,
    )


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _known_keys(endpoints: dict[str, list[str] | None], pools: list[str]) -> set[str]:
    """Every variable the file may set, given each host's endpoint names (None: the
    single-port form)."""
    known = set(_GLOBAL_KEYS) | pool_keys(pools)
    known |= {f"LOCAL_{s}" for s in _LOCAL_SUFFIXES}
    known |= {f"CRC_{s}" for s in _KUBE_SUFFIXES}
    for name, names in endpoints.items():
        p = prefix_of(name)
        known |= {f"{p}_{s}" for s in _PROVIDER_SUFFIXES}
        # with endpoints, the host's own are reported by _endpoints, with what to set
        known |= {f"{p}_{s}" for s in ENDPOINT_SUFFIXES}
        if names is None:
            known.add(f"CRC_{p}_PORT")
            continue
        for endpoint in names:
            known |= {f"{p}_{prefix_of(endpoint)}_{s}" for s in ENDPOINT_SUFFIXES}
            known.add(f"CRC_{p}_{prefix_of(endpoint)}_PORT")
    return known


def _endpoint_names_or_none(reader: Reader, host: str) -> list[str] | None:
    """``endpoint_names`` for the unknown-variable check: valid names only (the host's own
    parse reports the others)."""
    words = reader.words(f"{prefix_of(host)}_ENDPOINTS")
    if not reader.has(f"{prefix_of(host)}_ENDPOINTS"):
        return None
    return [w for w in words if DNS_LABEL.fullmatch(w)]


def listener_prefixes(reader: Reader, provider_names: list[str]) -> dict[str, str]:
    """Variable prefix -> the endpoint label a ``CRC_<PREFIX>_PORT`` names: a single-port
    host's own prefix, each endpoint's ``<PREFIX>_<ENDPOINT>`` for a host with endpoints."""
    found: dict[str, str] = {}
    for name in provider_names:
        names = _endpoint_names_or_none(reader, name)
        if names is None:
            found[prefix_of(name)] = name
        for endpoint in names or ():
            found[f"{prefix_of(name)}_{prefix_of(endpoint)}"] = f"{name}/{endpoint}"
    return found


def _reject_unknown(reader: Reader, provider_names: list[str]) -> None:
    pools = [w for w in reader.words("POOLS") if DNS_LABEL.fullmatch(w)]  # parse_pools checks
    endpoints = {n: _endpoint_names_or_none(reader, n) for n in provider_names}
    known = _known_keys(endpoints, pools)
    # a host with endpoints has no model variables of its own: never suggest one
    suggested = sorted(
        known
        - {
            f"{prefix_of(n)}_{s}"
            for n, names in endpoints.items()
            if names
            for s in ENDPOINT_SUFFIXES
        }
    )
    prefixes = list(listener_prefixes(reader, provider_names))
    for key in reader.assignments:
        if key in known:
            continue
        kube_port = _KUBE_PORT.fullmatch(key)
        if kube_port and _prefix_by_short_name(prefixes, kube_port.group(1)):
            continue
        hint = _endpoint_hint(key, endpoints)
        if hint is None:
            close = difflib.get_close_matches(key, suggested, n=1, cutoff=0.75)
            hint = (
                f"did you mean {close[0]}?"
                if close
                else "`skupper-mcp init PATH` writes a starter topology that names every variable"
            )
        if key.endswith("_SSH_HOST"):
            host = key[: -len("_SSH_HOST")].lower().replace("_", "-")
            hint = f"add {host} to PROVIDER_HOSTS to declare it, or {hint}"
        reader.problems.append(reader.error(key, f"unknown variable; {hint}"))


def _endpoint_hint(key: str, endpoints: dict[str, list[str] | None]) -> str | None:
    """What to do with ``<PREFIX>_<NAME>_<SUFFIX>`` that names no declared endpoint: the
    declared endpoint's variable it is close to, else that ``NAME`` is to be listed in
    ``<PREFIX>_ENDPOINTS`` (or that the host has one model server, set without a name)."""
    for host in sorted(endpoints, key=lambda h: -len(h)):
        p = prefix_of(host)
        suffix = next(
            (s for s in ENDPOINT_SUFFIXES if key.startswith(f"{p}_") and key.endswith(f"_{s}")),
            None,
        )
        middle = key[len(p) + 1 : -len(suffix) - 1] if suffix else ""
        if suffix is None or not middle:
            continue
        name = middle.lower().replace("_", "-")
        names = endpoints[host]
        if names is None:
            return (
                f"{host} has one model server, set by {p}_{suffix}; to give it several, "
                f'name them in {p}_ENDPOINTS (e.g. {p}_ENDPOINTS="chat {name}")'
            )
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.7)
        if close:
            return f"did you mean {p}_{prefix_of(close[0])}_{suffix}?"
        return (
            f"{name!r} is not one of {p}_ENDPOINTS ({' '.join(names) or 'none'}): "
            f"add it there to make it an endpoint of {host}"
        )
    return None


def _check_unique(
    reader: Reader,
    hosts: list[str],
    providers: list[ProviderHost],
    endpoints: list[ModelEndpoint],
    local: LocalSite | None,
    kube: KubeSite | None,
    pools: list[ModelPool],
) -> None:
    """Every port, address, profile and site name that must be one thing's only, among what
    parsed (``endpoints`` holds those of a host with a mistake elsewhere too). Each clash is
    a problem of its own, recorded with the others, never the first one raised."""
    _unique_endpoints(reader, hosts, endpoints)
    local_ports = _unique_local_ports(reader, endpoints)
    kube_ports = {port: name for name, port in (kube.listeners.items() if kube else ())}
    check_pool_ports(reader, pools, local_ports, kube_ports)
    for key, port in (
        (("LOCAL_INTER_ROUTER_PORT", local.inter_router_port), ("LOCAL_EDGE_PORT", local.edge_port))
        if local
        else ()
    ):
        if port not in local_ports:
            continue
        clash = next((e for e in endpoints if e.label == local_ports[port]), None)
        if reader.has(key) or clash is None:
            said = f"port {port} is also the local listener port of {local_ports[port]}"
            reader.problems.append(reader.error(key, said))
        else:  # the router's default port: what the user set is the endpoint's
            reader.problems.append(
                reader.error(
                    _local_port_key(reader, clash),
                    f"local listener port {port} is the local site's router port ({key}, "
                    "by default); choose another",
                )
            )
    if kube:
        _unique_kube_ports(reader, kube)
    _unique_router_addresses(reader, providers, local)
    _unique_profiles(reader, hosts, endpoints)
    _unique_site_names(reader, providers, local, kube)


def _unique_local_ports(reader: Reader, endpoints: list[ModelEndpoint]) -> dict[int, str]:
    """port -> model endpoint: each endpoint's local listener port, each its own."""
    local_ports: dict[int, str] = {}
    for e in endpoints:
        key = _local_port_key(reader, e)
        if e.local_port in local_ports:
            reader.problems.append(
                reader.error(
                    key,
                    f"local listener port {e.local_port} is already used by "
                    f"{local_ports[e.local_port]}; each "
                    f"{'endpoint' if e.name else 'provider'} needs its own local port",
                )
            )
            continue
        local_ports[e.local_port] = e.label
    return local_ports


def _local_port_key(reader: Reader, e: ModelEndpoint) -> str:
    """The variable that gave an endpoint its local port: its LOCAL_PORT, else MODEL_PORT."""
    own = f"{e.prefix}_LOCAL_PORT"
    return own if reader.has(own) else f"{e.prefix}_MODEL_PORT"


def _unique_endpoints(reader: Reader, hosts: list[str], endpoints: list[ModelEndpoint]) -> None:
    """A routing key two hosts' endpoints share, or an endpoint whose variable prefix is
    another host's: each a problem of its own (one host's own: ``_check_endpoints``)."""
    keys: dict[str, str] = {}  # a pool's key against them: pools._check_names
    prefixes = {prefix_of(h): h for h in hosts}
    for e in endpoints:
        if e.routing_key in keys and not keys[e.routing_key].startswith(f"{e.host}/"):
            reader.problems.append(_key_twice(reader, e, keys[e.routing_key]))
        keys.setdefault(e.routing_key, e.label)
        if e.name is not None and e.prefix in prefixes:
            reader.problems.append(
                reader.error(
                    f"{prefix_of(e.host)}_ENDPOINTS",
                    f"endpoint {e.name!r} makes the prefix {e.prefix}_, which is already "
                    f"host {prefixes[e.prefix]}'s; rename the endpoint",
                )
            )


def _key_twice(reader: Reader, e: ModelEndpoint, other: str) -> ConfigError:
    key = (
        f"{e.prefix}_ROUTING_KEY"
        if reader.has(f"{e.prefix}_ROUTING_KEY")
        else f"{e.prefix}_MODEL_PORT"
    )
    return reader.error(
        key,
        f"routing key {e.routing_key!r} is already used by {other}; each endpoint needs its own",
    )


def _check_endpoints(reader: Reader, endpoints: list[ModelEndpoint]) -> None:
    """One host's endpoints: two on one model port, or one routing key twice."""
    ports: dict[tuple[str, int], str] = {}
    keys: dict[str, str] = {}
    for e in endpoints:
        where = (e.model_host, e.model_port)
        if where in ports:
            reader.problems.append(
                reader.error(
                    f"{e.prefix}_MODEL_PORT",
                    f"{e.model_host}:{e.model_port} is already the model port of "
                    f"{ports[where]}; each endpoint is a model server of its own",
                )
            )
        ports.setdefault(where, e.label)
        if e.routing_key in keys:
            reader.problems.append(_key_twice(reader, e, keys[e.routing_key]))
        keys.setdefault(e.routing_key, e.label)


def _unique_kube_ports(reader: Reader, kube: KubeSite) -> None:
    seen: dict[int, str] = {}
    for name, port in kube.listeners.items():
        if port in seen:
            reader.problems.append(
                reader.error(
                    f"CRC_{prefix_of(name)}_PORT"
                    if reader.has(f"CRC_{prefix_of(name)}_PORT")
                    else "CRC_MODEL_PORT",
                    f"Kubernetes listener port {port} is already used for {seen[port]}",
                )
            )
            continue
        seen[port] = name


def _unique_router_addresses(
    reader: Reader, providers: list[ProviderHost], local: LocalSite | None
) -> None:
    """Hosts sharing a public address have distinct router ports."""
    by_address: dict[tuple[str, int], str] = {}
    sites: list[tuple[str, str | None, str, int, int]] = [
        (p.prefix, p.public_host, p.name, p.inter_router_port, p.edge_port) for p in providers
    ]
    if local:
        sites.append(
            ("LOCAL", local.public_host, local.name, local.inter_router_port, local.edge_port)
        )
    for prefix, address, name, inter, edge in sites:
        if address is None:
            continue
        for suffix, port in (("INTER_ROUTER_PORT", inter), ("EDGE_PORT", edge)):
            if (address, port) in by_address and by_address[(address, port)] != name:
                reader.problems.append(
                    reader.error(
                        f"{prefix}_{suffix}",
                        f"port {port} on {address} is already a router port of "
                        f"{by_address[(address, port)]}; hosts sharing an address need "
                        "distinct ports",
                    )
                )
                continue
            by_address[(address, port)] = name


def _unique_profiles(reader: Reader, hosts: list[str], endpoints: list[ModelEndpoint]) -> None:
    """Profile names unique across endpoints and hosts, and none the name of a host."""
    profiles: dict[str, str] = {}
    host_names = {*hosts, LOCAL_HOST, KUBE_HOST}
    for e in endpoints:
        for profile in e.profiles:
            if profile in profiles:
                reader.problems.append(
                    reader.error(
                        f"{e.prefix}_PROFILES",
                        f"profile {profile!r} is also a profile of {profiles[profile]}; "
                        "profile names must be unique across hosts and endpoints",
                    )
                )
            elif profile in host_names:
                reader.problems.append(
                    reader.error(
                        f"{e.prefix}_PROFILES", f"profile {profile!r} has the name of a host"
                    )
                )
            profiles.setdefault(profile, e.label)


def _unique_site_names(
    reader: Reader, providers: list[ProviderHost], local: LocalSite | None, kube: KubeSite | None
) -> None:
    site_names: dict[str, str] = {}
    all_sites = [(p.prefix, p.site_name) for p in providers]
    if local:
        all_sites.append(("LOCAL", local.site_name))
    if kube:
        all_sites.append(("CRC", kube.site_name))
    for prefix, site in all_sites:
        if site in site_names:
            reader.problems.append(
                reader.error(
                    f"{prefix}_SITE_NAME", f"site name {site!r} is also used by {site_names[site]}"
                )
            )
            continue
        site_names[site] = prefix
