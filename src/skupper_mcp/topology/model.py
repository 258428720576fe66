"""The topology's model: the providers, the local consumer, the optional Kubernetes consumer
and how SSH connections are made, as frozen pydantic models."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skupper_mcp.connectors.base import DEFAULT_CONNECT_TIMEOUT, SSHOptions, SSHTarget
from skupper_mcp.errors import ConfigError
from skupper_mcp.vocabulary import KUBE_HOST, LOCAL_HOST, ModelKind

DEFAULT_MIN_SKUPPER_VERSION = "2.1.0"
#: Requests waiting at which a model reads ``saturated`` (``MODEL_SATURATED_WAITING``).
DEFAULT_SATURATED_WAITING = 4


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelEndpoint(_Model):
    """One model server of a provider host: its port, routing key, local listener port,
    profiles, container and key file. A host of the single-port form has one, named None;
    a host with ``<PREFIX>_ENDPOINTS`` has one per name, each read from
    ``<PREFIX>_<ENDPOINT>_...`` variables."""

    host: str = Field(description="The provider host's name")
    name: str | None = Field(
        default=None, description="The endpoint's name (<PREFIX>_ENDPOINTS); None: single-port"
    )
    index: int = Field(default=0, description="Its place among its host's endpoints, from 0")
    prefix: str = Field(description="Variable prefix of its settings (GPU1 or GPU1_CHAT)")
    model_host: str = Field(description="Connector target host as seen on the provider")
    model_port: int = Field(description="Connector target port: the model API on the provider")
    local_port: int = Field(description="Listener port on the local site")
    routing_key: str
    profiles: dict[str, str] = Field(description="Profile name -> model id, in file order")
    default_profile: str
    model_container: str | None = Field(
        description="The podman container that serves the model; None when none does"
    )
    model_api_key_file: Path | None = None
    kind: ModelKind | None = Field(
        default=None,
        description="What it serves, as <PREFIX>_MODEL_KIND declares it (chat, embeddings, "
        "completions); None: recognised from what the server answers",
    )

    @property
    def label(self) -> str:
        """How rows and targets name it: ``HOST`` (single-port form) or ``HOST/ENDPOINT``."""
        return self.host if self.name is None else f"{self.host}/{self.name}"

    def profile_for_model(self, model_id: str) -> str | None:
        """The first profile of this endpoint that serves ``model_id``."""
        for profile, served in self.profiles.items():
            if served == model_id:
                return profile
        return None


def cluster_listener_name(label: str) -> str:
    """The cluster Listener (and its Service) of a model endpoint: ``model-listener-HOST``,
    ``model-listener-HOST-ENDPOINT`` for a host with endpoints."""
    return "model-listener-" + label.replace("/", "-")


class ProviderHost(_Model):
    """A GPU machine that serves a model through its own Skupper site (a hub).

    Its ``model_*``, ``local_port``, ``routing_key``, ``default_profile``, container and key
    file fields are its first endpoint's; ``profiles`` are every endpoint's; ``endpoints``
    lists each model server (one for the single-port form)."""

    name: str = Field(description="Host name in this topology, a DNS label (e.g. gpu1)")
    prefix: str = Field(description="Variable prefix in topology.env (GPU1)")
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
    model_container: str | None = Field(
        description="The podman container that serves the model; None when the model is "
        "not served by a container (<PREFIX>_MODEL_CONTAINER= set empty)"
    )
    model_api_key_file: Path | None = Field(
        default=None,
        description="File holding the model server's API key (read when a probe needs it, "
        "never at parse time; model_keys.read_model_api_key)",
    )
    tmpfs_workaround: bool
    endpoints: list[ModelEndpoint] = Field(
        description="Its model servers: one (named None) for the single-port form"
    )

    @property
    def multi_endpoint(self) -> bool:
        """True when the host declares ``<PREFIX>_ENDPOINTS``."""
        return self.endpoints[0].name is not None

    def endpoint(self, name: str | None) -> ModelEndpoint | None:
        return next((e for e in self.endpoints if e.name == name), None)

    def endpoint_of_profile(self, profile: str) -> ModelEndpoint | None:
        """The endpoint that serves ``profile``."""
        return next((e for e in self.endpoints if profile in e.profiles), None)

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
    listeners: dict[str, int] = Field(
        description="Model endpoint (HOST or HOST/ENDPOINT) -> listener port on the cluster"
    )
    direct_links: list[str] = Field(
        description="Providers linked directly; the others are reached through the local site"
    )


PoolStrategy = Literal["any", "priority", "weighted"]

#: The Skupper release that brings MultiKeyListener (priority and weighted pools):
#: pkg/apis/skupper/v2alpha1/multikeylistener_types.go@2.2.0, absent from 2.1.x.
MULTI_KEY_LISTENER_SINCE = "2.2.0"


class PoolMember(_Model):
    """One provider of a pool, and the profile (model) it serves the pool with."""

    provider: str = Field(description="The provider host's name")
    profile: str = Field(description="The provider's profile the pool serves")
    weight: int = Field(default=1, description="Its weight (weighted pools); 1 otherwise")


class ModelPool(_Model):
    """One local port for a model served by several providers, with failover.

    ``any``: every member's hub has a Connector with the pool's routing key, and the local
    site one Listener on it: the router sends each connection to a reachable connector.
    ``priority`` / ``weighted``: a MultiKeyListener over the members' own routing keys
    (Skupper 2.2+), in member order for priority (the first preferred)."""

    name: str = Field(description="The pool's name, a DNS label (a TARGET of test_model)")
    local_port: int = Field(description="Listener port on the local site")
    routing_key: str = Field(description="The shared routing key (any) or the listener's name")
    strategy: PoolStrategy
    members: list[PoolMember] = Field(description="In preference order")
    kube_port: int | None = Field(default=None, description="Listener port on the cluster")

    def member_names(self) -> list[str]:
        return [m.provider for m in self.members]

    def has(self, provider: str) -> bool:
        return provider in self.member_names()


class SSHSettings(_Model):
    """How every SSH connection is made."""

    identity_files: list[Path] = Field(default_factory=list)
    known_hosts: Path | None = None
    ssh_config: Path | None = Field(
        default=None, description="The OpenSSH client config read; None: ~/.ssh/config"
    )
    accept_new_host_keys: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT

    def options(self) -> SSHOptions:
        """The connector options these settings stand for."""
        return SSHOptions(
            identity_files=tuple(self.identity_files),
            known_hosts=self.known_hosts,
            ssh_config=self.ssh_config,
            accept_new_host_keys=self.accept_new_host_keys,
            connect_timeout=self.connect_timeout,
        )


class Topology(_Model):
    """The whole VAN: providers, the local consumer and an optional Kubernetes consumer."""

    path: Path
    providers: list[ProviderHost]
    local: LocalSite
    kubernetes: KubeSite | None = None
    pools: list[ModelPool] = Field(default_factory=list)
    ssh: SSHSettings = Field(default_factory=SSHSettings)
    min_skupper_version: str = DEFAULT_MIN_SKUPPER_VERSION
    saturated_waiting: int = Field(
        default=DEFAULT_SATURATED_WAITING,
        description="Requests waiting at which a served model reads saturated",
    )
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

    def model_endpoints(self) -> list[ModelEndpoint]:
        """Every provider's every model endpoint, in file order."""
        return [e for p in self.providers for e in p.endpoints]

    def model_endpoint(self, label: str) -> ModelEndpoint | None:
        """The endpoint ``HOST/ENDPOINT`` names, or a single-port host's only one."""
        host, _, name = label.partition("/")
        provider = self.provider(host)
        if provider is None:
            return None
        if not name:
            return provider.endpoints[0] if not provider.multi_endpoint else None
        return provider.endpoint(name)

    def member_endpoint(self, member: PoolMember) -> ModelEndpoint:
        """The model endpoint a pool member serves the pool from: its profile's."""
        provider = self.provider(member.provider)
        endpoint = provider.endpoint_of_profile(member.profile) if provider else None
        if endpoint is None:  # the topology's parse checked every member
            raise KeyError(f"{member.provider}: {member.profile}")
        return endpoint

    def pool(self, name: str) -> ModelPool | None:
        return next((pool for pool in self.pools if pool.name == name), None)

    def pools_of(self, provider: str) -> list[ModelPool]:
        """The pools ``provider`` serves."""
        return [pool for pool in self.pools if pool.has(provider)]

    def profile_names(self) -> list[str]:
        return [name for p in self.providers for name in p.profiles]

    def target_names(self) -> list[str]:
        """Everything a TARGET may be, for error messages: all, hosts, sites, profiles."""
        names = ["all", *self.host_names()]
        names += [p.site_name for p in self.providers] + [self.local.site_name]
        if self.kubernetes:
            names.append(self.kubernetes.site_name)
        endpoints = [e.label for e in self.model_endpoints() if e.name is not None]
        return names + endpoints + self.profile_names()


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/skupper-mcp``, else ``~/.local/state/skupper-mcp``."""
    base = os.environ.get("XDG_STATE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".local" / "state")
        except RuntimeError as error:
            raise ConfigError(
                f"no home directory for the default state folder ({error}); set STATE_DIR",
                variable="STATE_DIR",
            ) from error
    return Path(base) / "skupper-mcp"
