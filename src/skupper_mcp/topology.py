"""Parse and validate ``topology.env`` into pydantic models.

The file is shell-style ``KEY=value`` text, but it is only ever parsed, never executed:
expansions (``$VAR``, ``$(...)``, backticks) and escapes are errors. Every problem is a
``ConfigError`` naming the file, the line, the variable and what would be valid. Nothing
here touches the network or runs anything; the only I/O is reading the file.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skupper_mcp.connectors.base import DEFAULT_CONNECT_TIMEOUT, SSHOptions, SSHTarget
from skupper_mcp.errors import ConfigError
from skupper_mcp.vocabulary import KUBE_HOST, LOCAL_HOST, Role

ENV_VARIABLE = "SKUPPER_MCP_TOPOLOGY"
DEFAULT_MIN_SKUPPER_VERSION = "2.1.0"

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", re.ASCII)
_HOSTNAME = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?",
    re.ASCII,
)
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", re.ASCII)
_ROUTING_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}", re.ASCII)
_CONTAINER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}", re.ASCII)
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}", re.ASCII)
_CONTEXT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,252}", re.ASCII)
_VERSION = re.compile(r"([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,4}))?", re.ASCII)
_PORT = re.compile(r"[0-9]{1,5}", re.ASCII)
_NUMBER = re.compile(r"[0-9]{1,4}(\.[0-9]{1,3})?", re.ASCII)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_SAFE_PATH = re.compile(r"[A-Za-z0-9_.~/+@:=,-]+", re.ASCII)
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}

# Variables that belong to no host.
_GLOBAL_KEYS = {
    "PROVIDER_HOSTS",
    "SSH_IDENTITY",
    "SSH_KNOWN_HOSTS",
    "SSH_ACCEPT_NEW_HOST_KEYS",
    "SSH_CONNECT_TIMEOUT",
    "SKUPPER_MIN_VERSION",
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
    "MODEL_HOST",
    "MODEL_PORT",
    "LOCAL_PORT",
    "ROUTING_KEY",
    "PROFILES",
    "DEFAULT_PROFILE",
    "MODEL_CONTAINER",
    "TMPFS_WORKAROUND",
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


# --------------------------------------------------------------------------- models


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProviderHost(_Model):
    """A GPU machine that serves a model through its own Skupper site (a hub)."""

    name: str = Field(description="Host name in this topology, a DNS label (rhel-ai)")
    prefix: str = Field(description="Variable prefix in topology.env (RHEL_AI)")
    ssh: SSHTarget
    public_host: str = Field(description="Address peers dial for links")
    inter_router_port: int
    edge_port: int
    sans: list[str] = Field(description="Subject alternative names of the router certificate")
    site_name: str
    namespace: str
    model_host: str = Field(description="Connector target host as seen on the provider")
    model_port: int = Field(description="Connector target port: the model API on the provider")
    local_port: int = Field(description="Listener port on the local site")
    routing_key: str
    profiles: dict[str, str] = Field(description="Profile name -> model id, in file order")
    default_profile: str
    model_container: str
    tmpfs_workaround: bool

    def profile_for_model(self, model_id: str) -> str | None:
        """The first profile of this host that serves ``model_id``."""
        for profile, served in self.profiles.items():
            if served == model_id:
                return profile
        return None


class LocalSite(_Model):
    """The local consumer site (podman): listeners for every provider."""

    name: str = LOCAL_HOST
    site_name: str
    namespace: str
    inter_router_port: int
    edge_port: int
    public_host: str | None
    sans: list[str]
    listener_host: str
    ssh: SSHTarget | None = Field(
        default=None, description="Set to drive the local site over SSH; else local commands"
    )


class KubeSite(_Model):
    """The optional Kubernetes consumer site (for example CRC)."""

    name: str = KUBE_HOST
    site_name: str
    namespace: str
    kubeconfig: Path | None
    context: str | None
    listeners: dict[str, int] = Field(description="Provider name -> listener port on the cluster")
    direct_links: list[str] = Field(
        description="Providers linked directly; the others are reached through the local site"
    )


class SSHSettings(_Model):
    """How every SSH connection is made."""

    identity_files: list[Path] = Field(default_factory=list)
    known_hosts: Path | None = None
    accept_new_host_keys: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT

    def options(self) -> SSHOptions:
        """The connector options these settings stand for."""
        return SSHOptions(
            identity_files=tuple(self.identity_files),
            known_hosts=self.known_hosts,
            accept_new_host_keys=self.accept_new_host_keys,
            connect_timeout=self.connect_timeout,
        )


class Topology(_Model):
    """The whole VAN: providers, the local consumer and an optional Kubernetes consumer."""

    path: Path
    providers: list[ProviderHost]
    local: LocalSite
    kubernetes: KubeSite | None = None
    ssh: SSHSettings = Field(default_factory=SSHSettings)
    min_skupper_version: str = DEFAULT_MIN_SKUPPER_VERSION
    state_dir: Path = Field(
        default_factory=lambda: default_state_dir(),
        description="Where backups and the operation lock live",
    )

    def host_names(self) -> list[str]:
        """Every host: providers, then ``local``, then the Kubernetes site when there is one."""
        names = [p.name for p in self.providers] + [self.local.name]
        if self.kubernetes:
            names.append(self.kubernetes.name)
        return names

    def provider(self, name: str) -> ProviderHost | None:
        """The provider called ``name`` (host name or site name)."""
        for p in self.providers:
            if name in (p.name, p.site_name):
                return p
        return None

    def provider_for_profile(self, profile: str) -> ProviderHost | None:
        """The provider that can serve ``profile``."""
        for p in self.providers:
            if profile in p.profiles:
                return p
        return None

    def site_name_of(self, host: str) -> str:
        """The Skupper site name of a host."""
        if host == self.local.name:
            return self.local.site_name
        if self.kubernetes and host == self.kubernetes.name:
            return self.kubernetes.site_name
        provider = self.provider(host)
        if provider is None:
            raise KeyError(host)
        return provider.site_name

    def host_of(self, name: str) -> str | None:
        """The host a host name or site name stands for, or None."""
        if name in (self.local.name, self.local.site_name):
            return self.local.name
        if self.kubernetes and name in (self.kubernetes.name, self.kubernetes.site_name):
            return self.kubernetes.name
        provider = self.provider(name)
        return provider.name if provider else None

    def role_of(self, host: str) -> Role:
        return "provider" if self.provider(host) else "consumer"

    def profile_names(self) -> list[str]:
        return [name for p in self.providers for name in p.profiles]

    def target_names(self) -> list[str]:
        """Everything a TARGET may be, for error messages: all, hosts, sites, profiles."""
        names = ["all", *self.host_names()]
        names += [p.site_name for p in self.providers] + [self.local.site_name]
        if self.kubernetes:
            names.append(self.kubernetes.site_name)
        return names + self.profile_names()


# --------------------------------------------------------------------------- lexing


@dataclass(frozen=True)
class Assignment:
    """One ``KEY=value`` line."""

    key: str
    value: str
    line: int


def parse_assignments(text: str, path: str) -> dict[str, Assignment]:
    """Split ``topology.env`` text into assignments, without interpreting any value."""
    found: dict[str, Assignment] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export ") or line.startswith("export\t"):
            line = line[len("export") :].lstrip()
        key, sep, rest = line.partition("=")
        if not sep or not _KEY.fullmatch(key):
            raise ConfigError(
                f"expected KEY=value, got {_excerpt(raw)}; "
                "keys are letters, digits and underscores, with no spaces around '='",
                path=path,
                line=number,
            )
        value = _parse_value(rest, path=path, line=number, key=key)
        if key in found:
            raise ConfigError(
                f"set twice (first on line {found[key].line}); keep one",
                path=path,
                line=number,
                variable=key,
            )
        found[key] = Assignment(key, value, number)
    return found


def _parse_value(rest: str, *, path: str, line: int, key: str) -> str:
    def fail(message: str) -> ConfigError:
        return ConfigError(message, path=path, line=line, variable=key)

    if rest[:1] in ("'", '"'):
        quote = rest[0]
        end = rest.find(quote, 1)
        if end < 0:
            raise fail(f"missing closing {quote}")
        value, after = rest[1:end], rest[end + 1 :]
        if after.strip() and not after.lstrip().startswith("#"):
            raise fail("unexpected text after the closing quote; put a comment after '#'")
        if after and not after[:1].isspace() and after.strip():
            raise fail("a comment needs a space before '#'")
    else:
        value, _, comment = rest.partition(" #")
        if not comment:
            value, _, _ = value.partition("\t#")
        value = value.strip()
        if any(c.isspace() for c in value):
            raise fail('a value with spaces must be quoted: KEY="a b"')
        if value[:1] in ("'", '"') or value.count("'") or value.count('"'):
            raise fail("quotes may only enclose the whole value")
    if "$" in value or "`" in value:
        raise fail("expansions ($VAR, $(...), backticks) are not allowed: the file is never run")
    if "\\" in value:
        raise fail("backslash escapes are not supported; write the value literally")
    if any(ord(c) < 32 and c != "\t" for c in value):
        raise fail("control characters are not allowed")
    return value


def _excerpt(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 40 else text[:37] + "...")


# --------------------------------------------------------------------------- building


class _Reader:
    """Typed access to the assignments, with errors that point at the right line."""

    def __init__(self, assignments: Mapping[str, Assignment], path: str) -> None:
        self.assignments = assignments
        self.path = path

    def error(self, key: str, message: str) -> ConfigError:
        found = self.assignments.get(key)
        return ConfigError(
            message, path=self.path, line=found.line if found else None, variable=key
        )

    def has(self, key: str) -> bool:
        return key in self.assignments

    def raw(self, key: str) -> str | None:
        found = self.assignments.get(key)
        if found is None:
            return None
        return found.value

    def required(self, key: str, what: str) -> str:
        value = self.raw(key)
        if value is None or value == "":
            raise ConfigError(f"required: {what}", path=self.path, variable=key)
        return value

    def text(self, key: str, default: str, pattern: re.Pattern[str], what: str) -> str:
        value = self.raw(key)
        if value is None or value == "":
            return default
        return self.check(key, value, pattern, what)

    def check(self, key: str, value: str, pattern: re.Pattern[str], what: str) -> str:
        if not pattern.fullmatch(value):
            raise self.error(key, f"{_excerpt(value)} is not valid: expected {what}")
        return value

    def label(self, key: str, default: str) -> str:
        return self.text(key, default, _DNS_LABEL, _LABEL_RULE)

    def host(self, key: str, default: str | None = None, *, required: str = "") -> str:
        value = self.raw(key)
        if not value:
            if default is not None:
                return default
            raise ConfigError(f"required: {required}", path=self.path, variable=key)
        return self.check_host(key, value)

    def check_host(self, key: str, value: str) -> str:
        if not _is_host(value):
            raise self.error(
                key, f"{_excerpt(value)} is not a host name or IP address (letters, digits, . -)"
            )
        return value

    def port(self, key: str, default: int | None = None, *, required: str = "") -> int:
        value = self.raw(key)
        if not value:
            if default is not None:
                return default
            raise ConfigError(f"required: {required}", path=self.path, variable=key)
        if not _PORT.fullmatch(value) or not 1 <= int(value) <= 65535:
            raise self.error(key, f"{_excerpt(value)} is not a port: expected 1-65535")
        return int(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if not value:
            return default
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise self.error(key, f"{_excerpt(value)} is not a boolean: use true/false/yes/no/1/0")

    def path_value(self, key: str, base: Path) -> Path | None:
        value = self.raw(key)
        if not value:
            return None
        self.check(key, value, _SAFE_PATH, "a file path (letters, digits, / . _ - ~)")
        return _resolve_path(value, base)

    def words(self, key: str) -> list[str]:
        value = self.raw(key)
        return value.split() if value else []


_LABEL_RULE = "a DNS-1123 label (lowercase letters, digits and '-', 1-63 characters)"


def _is_host(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
        return True
    except ValueError:
        return bool(_HOSTNAME.fullmatch(value))


def _resolve_path(value: str, base: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def prefix_of(name: str) -> str:
    """The variable prefix of a host name: rhel-ai -> RHEL_AI."""
    return name.upper().replace("-", "_")


def parse_topology(text: str, path: Path | str = "topology.env") -> Topology:
    """Parse and validate topology text. Raises ``ConfigError`` on any problem."""
    path_str = str(path)
    assignments = parse_assignments(text, path_str)
    reader = _Reader(assignments, path_str)
    base = Path(path).parent
    provider_names = _provider_names(reader)
    _reject_unknown(reader, provider_names)
    providers = [_provider(reader, name) for name in provider_names]
    if not providers:
        raise ConfigError(
            "no provider hosts: set PROVIDER_HOSTS or <PREFIX>_SSH_HOST for each GPU host",
            path=path_str,
            variable="PROVIDER_HOSTS",
        )
    local = _local_site(reader)
    kube = _kube_site(reader, providers, base)
    ssh = _ssh_settings(reader, base)
    min_version = reader.text(
        "SKUPPER_MIN_VERSION", DEFAULT_MIN_SKUPPER_VERSION, _VERSION, "a version like 2.1.0"
    )
    state_dir = reader.path_value("STATE_DIR", base) or default_state_dir()
    _check_unique(reader, providers, local, kube)
    try:
        return Topology(
            path=Path(path),
            providers=providers,
            local=local,
            kubernetes=kube,
            ssh=ssh,
            min_skupper_version=min_version,
            state_dir=state_dir,
        )
    except ValidationError as error:  # a bug in the checks above, reported as config
        raise ConfigError(f"invalid topology: {error}", path=path_str) from error


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/skupper-mcp``, else ``~/.local/state/skupper-mcp``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "skupper-mcp"


def _provider_names(reader: _Reader) -> list[str]:
    if reader.has("PROVIDER_HOSTS"):
        names = reader.words("PROVIDER_HOSTS")
        for name in names:
            reader.check("PROVIDER_HOSTS", name, _DNS_LABEL, _LABEL_RULE)
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
            if not _DNS_LABEL.fullmatch(name):
                raise reader.error(key, f"the host name {name!r} is not {_LABEL_RULE}")
            inferred.append(name)
    return inferred


def _split_user(reader: _Reader, key: str, value: str) -> tuple[str | None, str]:
    user, at, host = value.rpartition("@")
    if not at:
        return None, value
    reader.check(key, user, _USER, "user@host with a plain user name")
    return user, host


def _ssh_target(reader: _Reader, prefix: str, host_value: str) -> SSHTarget:
    user, host = _split_user(reader, f"{prefix}_SSH_HOST", host_value)
    reader.check_host(f"{prefix}_SSH_HOST", host)
    explicit_user = reader.text(f"{prefix}_SSH_USER", "", _USER, "a user name")
    return SSHTarget(
        host=host, port=reader.port(f"{prefix}_SSH_PORT", 22), user=explicit_user or user
    )


def _provider(reader: _Reader, name: str) -> ProviderHost:
    p = prefix_of(name)
    ssh = _ssh_target(reader, p, reader.required(f"{p}_SSH_HOST", f"the SSH host of {name}"))
    public_host = reader.host(f"{p}_PUBLIC_HOST", required=f"the address peers dial for {name}")
    inter_router = reader.port(
        f"{p}_INTER_ROUTER_PORT", required=f"the inter-router port of {name}"
    )
    edge = reader.port(f"{p}_EDGE_PORT", inter_router + 1 if inter_router < 65535 else 1)
    if edge == inter_router:
        raise reader.error(f"{p}_EDGE_PORT", "must differ from the inter-router port")
    model_port = reader.port(f"{p}_MODEL_PORT", required=f"the model API port on {name}")
    profiles = _profiles(reader, f"{p}_PROFILES", name)
    default_profile = reader.label(f"{p}_DEFAULT_PROFILE", next(iter(profiles)))
    if default_profile not in profiles:
        raise reader.error(
            f"{p}_DEFAULT_PROFILE",
            f"{default_profile!r} is not one of {name}'s profiles: {', '.join(profiles)}",
        )
    return ProviderHost(
        name=name,
        prefix=p,
        ssh=ssh,
        public_host=public_host,
        inter_router_port=inter_router,
        edge_port=edge,
        sans=_sans(reader, f"{p}_SANS", public_host),
        site_name=reader.label(f"{p}_SITE_NAME", f"hub-{name}"),
        namespace=reader.label(f"{p}_NAMESPACE", "default"),
        model_host=reader.host(f"{p}_MODEL_HOST", "127.0.0.1"),
        model_port=model_port,
        local_port=reader.port(f"{p}_LOCAL_PORT", model_port),
        routing_key=reader.text(
            f"{p}_ROUTING_KEY", f"model-api-{name}", _ROUTING_KEY, "letters, digits, . _ -"
        ),
        profiles=profiles,
        default_profile=default_profile,
        model_container=reader.text(
            f"{p}_MODEL_CONTAINER", "hosted-model", _CONTAINER, "a container name"
        ),
        tmpfs_workaround=reader.boolean(f"{p}_TMPFS_WORKAROUND", False),
    )


def _profiles(reader: _Reader, key: str, host: str) -> dict[str, str]:
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
            raise reader.error(key, f"{_excerpt(word)}: expected profile=model-id")
        reader.check(key, name, _DNS_LABEL, f"a profile name that is {_LABEL_RULE}")
        reader.check(key, model_id, _MODEL_ID, "a model id (letters, digits, . _ : / @ + -)")
        if name in profiles:
            raise reader.error(key, f"profile {name!r} is listed twice")
        profiles[name] = model_id
    return profiles


def _sans(reader: _Reader, key: str, public_host: str | None) -> list[str]:
    sans = [reader.check_host(key, s) for s in reader.words(key)]
    if not sans and public_host:
        sans = [public_host]
    return sans


def _local_site(reader: _Reader) -> LocalSite:
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
        site_name=reader.label("LOCAL_SITE_NAME", "")
        or _missing(reader, "LOCAL_SITE_NAME", "the local site's name (e.g. local-<user>)"),
        namespace=reader.label("LOCAL_NAMESPACE", "default"),
        inter_router_port=inter_router,
        edge_port=edge,
        public_host=public_host,
        sans=_sans(reader, "LOCAL_SANS", public_host),
        listener_host=reader.host("LOCAL_LISTENER_HOST", "127.0.0.1"),
        ssh=ssh,
    )


def _missing(reader: _Reader, key: str, what: str) -> str:
    raise ConfigError(f"required: {what}", path=reader.path, variable=key)


_KUBE_PORT = re.compile(r"CRC_([A-Z0-9_]+?)(_MODEL)?_PORT", re.ASCII)


def _kube_site(reader: _Reader, providers: list[ProviderHost], base: Path) -> KubeSite | None:
    keys = [k for k in reader.assignments if k.startswith("CRC_")]
    if not keys:
        return None
    site_name = reader.label("CRC_SITE_NAME", "") or _missing(
        reader, "CRC_SITE_NAME", "the Kubernetes site's name, since CRC_ variables are set"
    )
    by_name = {p.name: p for p in providers}
    listeners: dict[str, int] = {}
    listener_keys: dict[str, str] = {}

    def add(provider: ProviderHost, key: str) -> None:
        if provider.name in listeners:
            raise reader.error(
                key, f"{provider.name} already has a listener from {listener_keys[provider.name]}"
            )
        listeners[provider.name] = reader.port(key)
        listener_keys[provider.name] = key

    if reader.has("CRC_MODEL_PORT"):
        key = reader.raw("CRC_ROUTING_KEY")
        if key:
            owners = [p for p in providers if p.routing_key == key]
            if not owners:
                keys_known = ", ".join(p.routing_key for p in providers)
                raise reader.error("CRC_ROUTING_KEY", f"{key!r} is no provider's: {keys_known}")
            add(owners[0], "CRC_MODEL_PORT")
        else:
            add(providers[0], "CRC_MODEL_PORT")
    elif reader.raw("CRC_ROUTING_KEY"):
        raise reader.error("CRC_ROUTING_KEY", "needs CRC_MODEL_PORT, the listener's port")
    for key in keys:
        match = _KUBE_PORT.fullmatch(key)
        if key == "CRC_MODEL_PORT" or not match:
            continue
        prefix = _prefix_by_short_name([p.prefix for p in providers], match.group(1))
        if prefix is not None:
            add(next(p for p in providers if p.prefix == prefix), key)
    direct = reader.words("CRC_DIRECT_LINKS") or [providers[0].name]
    for name in direct:
        if name not in by_name:
            raise reader.error(
                "CRC_DIRECT_LINKS", f"{name!r} is not a provider host: {', '.join(by_name)}"
            )
    return KubeSite(
        site_name=site_name,
        namespace=reader.label("CRC_NAMESPACE", "default"),
        kubeconfig=reader.path_value("CRC_KUBECONFIG", base),
        context=reader.text("CRC_CONTEXT", "", _CONTEXT, "a kubeconfig context name") or None,
        listeners=listeners,
        direct_links=direct,
    )


def _prefix_by_short_name(prefixes: list[str], short: str) -> str | None:
    """The provider prefix a CRC_<short>_PORT variable names."""
    if short in prefixes:
        return short
    # the seed's CRC_RHTEVAN_MODEL_PORT names rhtevan-work by its first word
    leading = [p for p in prefixes if p.startswith(short + "_")]
    return leading[0] if len(leading) == 1 else None


def _ssh_settings(reader: _Reader, base: Path) -> SSHSettings:
    identities = []
    for word in reader.words("SSH_IDENTITY"):
        reader.check("SSH_IDENTITY", word, _SAFE_PATH, "file paths separated by spaces")
        identities.append(_resolve_path(word, base))
    timeout_text = reader.raw("SSH_CONNECT_TIMEOUT")
    timeout = DEFAULT_CONNECT_TIMEOUT
    if timeout_text:
        if not _NUMBER.fullmatch(timeout_text) or float(timeout_text) <= 0:
            raise reader.error("SSH_CONNECT_TIMEOUT", "expected seconds, a positive number")
        timeout = float(timeout_text)
    return SSHSettings(
        identity_files=identities,
        known_hosts=reader.path_value("SSH_KNOWN_HOSTS", base),
        accept_new_host_keys=reader.boolean("SSH_ACCEPT_NEW_HOST_KEYS", False),
        connect_timeout=timeout,
    )


def _known_keys(provider_names: Iterable[str]) -> set[str]:
    known = set(_GLOBAL_KEYS)
    known |= {f"LOCAL_{s}" for s in _LOCAL_SUFFIXES}
    known |= {f"CRC_{s}" for s in _KUBE_SUFFIXES}
    for name in provider_names:
        known |= {f"{prefix_of(name)}_{s}" for s in _PROVIDER_SUFFIXES}
        known.add(f"CRC_{prefix_of(name)}_PORT")
    return known


def _reject_unknown(reader: _Reader, provider_names: list[str]) -> None:
    known = _known_keys(provider_names)
    prefixes = [prefix_of(name) for name in provider_names]
    for key in reader.assignments:
        if key in known:
            continue
        kube_port = _KUBE_PORT.fullmatch(key)
        if kube_port and _prefix_by_short_name(prefixes, kube_port.group(1)):
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
        hint = f"did you mean {close[0]}?" if close else "see topology.env.example"
        if key.endswith("_SSH_HOST"):
            host = key[: -len("_SSH_HOST")].lower().replace("_", "-")
            hint = f"add {host} to PROVIDER_HOSTS to declare it, or {hint}"
        raise reader.error(key, f"unknown variable; {hint}")


def _check_unique(
    reader: _Reader, providers: list[ProviderHost], local: LocalSite, kube: KubeSite | None
) -> None:
    local_ports: dict[int, str] = {}
    for p in providers:
        key = (
            f"{p.prefix}_LOCAL_PORT"
            if reader.has(f"{p.prefix}_LOCAL_PORT")
            else (f"{p.prefix}_MODEL_PORT")
        )
        if p.local_port in local_ports:
            raise reader.error(
                key,
                f"local listener port {p.local_port} is already used by {local_ports[p.local_port]}"
                "; each provider needs its own local port",
            )
        local_ports[p.local_port] = p.name
    for key, port in (
        ("LOCAL_INTER_ROUTER_PORT", local.inter_router_port),
        ("LOCAL_EDGE_PORT", local.edge_port),
    ):
        if port in local_ports:
            raise reader.error(
                key, f"port {port} is also the local listener port of {local_ports[port]}"
            )
    if kube:
        seen: dict[int, str] = {}
        for name, port in kube.listeners.items():
            if port in seen:
                raise reader.error(
                    f"CRC_{prefix_of(name)}_PORT"
                    if reader.has(f"CRC_{prefix_of(name)}_PORT")
                    else "CRC_MODEL_PORT",
                    f"Kubernetes listener port {port} is already used for {seen[port]}",
                )
            seen[port] = name
    by_address: dict[tuple[str, int], str] = {}
    sites: list[tuple[str, str | None, str, int, int]] = [
        (p.prefix, p.public_host, p.name, p.inter_router_port, p.edge_port) for p in providers
    ]
    sites.append(("LOCAL", local.public_host, local.name, local.inter_router_port, local.edge_port))
    for prefix, address, name, inter, edge in sites:
        if address is None:
            continue
        for suffix, port in (("INTER_ROUTER_PORT", inter), ("EDGE_PORT", edge)):
            if (address, port) in by_address and by_address[(address, port)] != name:
                raise reader.error(
                    f"{prefix}_{suffix}",
                    f"port {port} on {address} is already a router port of "
                    f"{by_address[(address, port)]}; hosts sharing an address need distinct ports",
                )
            by_address[(address, port)] = name
    profiles: dict[str, str] = {}
    for p in providers:
        for profile in p.profiles:
            if profile in profiles:
                raise reader.error(
                    f"{p.prefix}_PROFILES",
                    f"profile {profile!r} is also a profile of {profiles[profile]}; "
                    "profile names must be unique across hosts",
                )
            profiles[profile] = p.name
    hosts = {p.name for p in providers} | {LOCAL_HOST, KUBE_HOST}
    for p in providers:
        for profile in p.profiles:
            if profile in hosts:
                raise reader.error(
                    f"{p.prefix}_PROFILES", f"profile {profile!r} has the name of a host"
                )
    site_names: dict[str, str] = {}
    all_sites = [(p.prefix, p.site_name) for p in providers] + [("LOCAL", local.site_name)]
    if kube:
        all_sites.append(("CRC", kube.site_name))
    for prefix, site in all_sites:
        if site in site_names:
            raise reader.error(
                f"{prefix}_SITE_NAME", f"site name {site!r} is also used by {site_names[site]}"
            )
        site_names[site] = prefix


# --------------------------------------------------------------------------- files


def find_topology_path(
    explicit: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
) -> Path:
    """Where the topology is: --topology, $SKUPPER_MCP_TOPOLOGY, ./topology.env, then
    ~/.config/skupper-mcp/topology.env. Raises ConfigError when none exists."""
    if explicit:
        return Path(explicit)
    env = os.environ if environ is None else environ
    if env.get(ENV_VARIABLE):
        return Path(env[ENV_VARIABLE])
    candidates = [
        (cwd or Path.cwd()) / "topology.env",
        (home or Path.home()) / ".config" / "skupper-mcp" / "topology.env",
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise ConfigError(
        f"no topology file: pass --topology PATH, set {ENV_VARIABLE}, or create one of {tried} "
        "(start from topology.env.example)"
    )


def load_topology(path: str | os.PathLike[str] | None = None) -> Topology:
    """Find, read and parse the topology."""
    found = find_topology_path(path)
    try:
        text = found.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the topology: {error}", path=str(found)) from error
    return parse_topology(text, found)
