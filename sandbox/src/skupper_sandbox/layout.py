"""The shape of a sandbox world: its directory, its addresses and ports, and world.json.

Everything here is pure planning (plus the address probe): which hosts exist, which
loopback address and ports each one gets, and where each file lives under the world's
directory. See docs/sandbox.md sections 1 and 2.
"""

from __future__ import annotations

import hashlib
import socket
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

SSH_PORT = 2222
KUBE_PORT = 6443
MANAGEMENT_PORT = 5671
DEFAULT_INTER_ROUTER_PORT = 55671
DEFAULT_EDGE_PORT = 45671
MAX_PROVIDERS = 200
DEFAULT_SKUPPER_VERSION = "2.1.3"
MODEL_CONTAINER = "hosted-model"
EMBED_CONTAINER = "hosted-model-embed"
BUILTIN_MODEL_IMAGE = "localhost/skupper-mcp-sandbox/model-server:latest"
CUSTOM_MODEL_IMAGE = "localhost/skupper-mcp-sandbox/custom-model:latest"
LOCAL_SITE_NAME = "local-sandbox"
CRC_SITE_NAME = "crc-sandbox"
CRC_NAMESPACE = "skupper-models"
CRC_CONTEXT = "crc-admin"
CRC_MODEL_PORT = 8000
CRC_RHTEVAN_MODEL_PORT = 8001
#: The cluster listener of the first embeddings endpoint; the next ones count up from it.
CRC_EMBED_PORT = 8002
#: How far above a host's chat model port its embeddings server listens (``--embeddings``).
EMBED_PORT_OFFSET = 500
#: The model id a host's embeddings server answers (``--embeddings``).
EMBED_MODEL_ID = "granite-embedding-125m-english"

# The users a real deployment logs in as (topology.env.example): RHEL AI's cloud image
# user, and a developer's own account on a workstation and a laptop. Each is the first user
# of its host: uid and gid 1000. A root host (`sandbox up --root-host NAME`) is uid 0.
_EXAMPLE_USERS = {"rhel-ai": "cloud-user", "rhtevan-work": "ezhang", "local": "ezhang"}
DEFAULT_USER = "cloud-user"
FIRST_UID = 1000

SshdMode = Literal["asyncssh", "openssh"]
Role = Literal["provider", "consumer", "kubernetes"]

# The example topology's two hosts keep their names, profiles and ports; later providers
# are generated.
_EXAMPLE_PROFILES: dict[str, tuple[dict[str, str], str]] = {
    "rhel-ai": (
        {
            "g8b-fp8-spec-128k": "granite-3.3-8b-instruct-fp8",
            "g8b-32k": "granite-3.3-8b-instruct",
        },
        "g8b-fp8-spec-128k",
    ),
    "rhtevan-work": (
        {
            "g3b-16k": "granite-3.3-2b-instruct",
            "g3b-4k": "granite-3.3-2b-instruct-4k",
        },
        "g3b-16k",
    ),
}


@dataclass(frozen=True)
class WorldSpec:
    """What a new world is asked to be: what ``sandbox up`` is given, one value from the
    test helper (``testing.running_world``) through the command line to ``plan_world``.

    ``skupper_versions`` maps a host name to the Skupper release its CLI emulates (the
    others get DEFAULT_SKUPPER_VERSION); ``namespace`` is every podman site's namespace.
    Every SSH host logs in as its non-root user, except those in ``root_hosts`` (uid 0).
    ``host_quirks`` gives some SSH hosts the quirks of real ones (``quirks``).
    ``model_server_command`` runs as each provider's model instead of the built-in one;
    a real-podman host's model container sees each of ``model_server_volumes`` at its own
    path (``podman run -v DIR:DIR``, as a user hands a model server its key), since its root
    is the image's, not the machine's.
    ``router``: real | imitation | auto (None: ``$SKMCP_SANDBOX_ROUTER``, else auto)."""

    providers: int = 2
    sshd: SshdMode = "asyncssh"
    kubernetes: bool = True
    model_server_command: str | None = None
    model_server_volumes: tuple[str, ...] = ()
    skupper_versions: Mapping[str, str] = field(default_factory=dict)
    namespace: str = "default"
    root_hosts: frozenset[str] = frozenset()
    router: str | None = None
    # real | emulated | auto (skupper_sandbox.real_podman.choose; None: $SKMCP_SANDBOX_PODMAN,
    # else auto)
    podman: str | None = None
    # host name -> its quirks (skupper_sandbox.quirks), as `--host-quirk HOST=QUIRK` gives
    host_quirks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # providers that serve two models side by side (`--embeddings HOST`): their topology
    # declares two endpoints, chat (the usual server) and embed (a second container)
    embeddings_hosts: frozenset[str] = frozenset()
    # provider name -> the engine its model server answers as (skupper_sandbox.engines), as
    # `--model-engine HOST=ENGINE` gives (the others: openai)
    model_engines: Mapping[str, str] = field(default_factory=dict)


class HostEntry(BaseModel):
    """One simulated host: where it is, what it serves, which ports it uses."""

    name: str
    address: str
    ssh_port: int = SSH_PORT
    role: Role
    ports: dict[str, int] = Field(default_factory=dict)
    profiles: dict[str, str] = Field(default_factory=dict)
    default_profile: str | None = None
    routing_key: str | None = None
    tmp_writable: bool = True
    skupper_version: str = DEFAULT_SKUPPER_VERSION
    user: str = DEFAULT_USER
    uid: int = FIRST_UID
    gid: int = -1  # -1: the same as uid
    # a Unix user made for this world (skupper_sandbox.real_users), not root wearing a name
    real_user: bool = False
    quirks: list[str] = Field(default_factory=list)
    # a second model server beside the first (`--embeddings HOST`): ports["embed"] serves
    # EMBED_MODEL_ID from the container EMBED_CONTAINER
    embeddings: bool = False
    model_engine: str = "openai"

    @property
    def default_model_id(self) -> str | None:
        """The model id the default profile serves (what the model container answers)."""
        return self.profiles.get(self.default_profile or "")

    @property
    def prefix(self) -> str:
        """The topology.env variable prefix: ``rhel-ai`` -> ``RHEL_AI_``."""
        return env_prefix(self.name)


class KubeEntry(BaseModel):
    """The Kubernetes API of the ``crc`` site."""

    address: str
    port: int = KUBE_PORT
    kubeconfig: str
    pid: int | None = None


class WorldInfo(BaseModel):
    """What ``world.json`` holds: the world's identity, hosts and running processes."""

    id: str
    dir: str
    sshd: SshdMode = "asyncssh"
    block: str
    hosts: list[HostEntry]
    kube: KubeEntry | None = None
    model_server_command: str | None = None
    model_server_volumes: list[str] = Field(default_factory=list)
    daemon_pid: int | None = None
    namespace: str = "default"  # the Skupper namespace of every podman site
    # skupper_sandbox.router.choice: "real" (skrouterd in router_home) or "imitation".
    router: str = "imitation"
    router_home: str | None = None
    # "real": every SSH host uses this machine's podman (skupper_sandbox.real_hosts)
    podman: str = "emulated"

    def host(self, name: str) -> HostEntry:
        """The host called ``name``; ``KeyError`` names the valid ones."""
        for entry in self.hosts:
            if entry.name == name:
                return entry
        valid = ", ".join(h.name for h in self.hosts)
        raise KeyError(f"no host {name!r} in this sandbox (hosts: {valid})")

    @property
    def providers(self) -> list[HostEntry]:
        return [h for h in self.hosts if h.role == "provider"]

    @property
    def ssh_hosts(self) -> list[HostEntry]:
        """The hosts that run an SSH server (everything but the Kubernetes site)."""
        return [h for h in self.hosts if h.role != "kubernetes"]


class WorldLayout:
    """Where each file of a world lives under its directory (docs/sandbox.md section 2)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.world_json = self.root / "world.json"
        self.topology_env = self.root / "topology.env"
        self.known_hosts = self.root / "known_hosts"
        self.ready = self.root / "ready"
        self.daemon_pid_file = self.root / "daemon.pid"
        self.ssh_dir = self.root / "ssh"
        self.client_key = self.ssh_dir / "id_ed25519"
        self.authorized_keys = self.ssh_dir / "authorized_keys"
        self.bin_dir = self.root / "bin"
        self.hosts_dir = self.root / "hosts"
        self.kube_dir = self.root / "kube"
        self.kubeconfig = self.kube_dir / "kubeconfig"
        self.kube_fault = self.kube_dir / "fault.json"
        self.logs_dir = self.root / "logs"
        self.world_log = self.logs_dir / "world.log"

    def host_dir(self, name: str) -> Path:
        return self.hosts_dir / name

    def host_key(self, name: str) -> Path:
        return self.host_dir(name) / "ssh_host_ed25519_key"

    def sshd_config(self, name: str) -> Path:
        return self.host_dir(name) / "sshd_config"

    def log(self, name: str) -> Path:
        return self.logs_dir / f"{name}.log"

    def load(self) -> WorldInfo:
        """Read world.json (``FileNotFoundError`` when no world was ever built here)."""
        return WorldInfo.model_validate_json(self.world_json.read_text())

    def save(self, info: WorldInfo) -> None:
        """Write world.json atomically, so a reader never sees half of it."""
        tmp = self.world_json.with_suffix(".json.tmp")
        tmp.write_text(info.model_dump_json(indent=2) + "\n")
        tmp.replace(self.world_json)


def env_prefix(name: str) -> str:
    return name.upper().replace("-", "_") + "_"


def provider_names(count: int) -> list[str]:
    """``rhel-ai``, ``rhtevan-work`` (as in topology.env.example), then ``provider-3`` ..."""
    if not 1 <= count <= MAX_PROVIDERS:
        raise ValueError(f"providers must be between 1 and {MAX_PROVIDERS}, not {count}")
    examples = list(_EXAMPLE_PROFILES)
    return [examples[i] if i < len(examples) else f"provider-{i + 1}" for i in range(count)]


def _provider(index: int, name: str, block: str) -> HostEntry:
    number = index + 1
    if name in _EXAMPLE_PROFILES:
        profiles, default = _EXAMPLE_PROFILES[name]
    else:
        profiles = {
            f"p{number}-small": f"sandbox-small-{number}",
            f"p{number}-large": f"sandbox-large-{number}",
        }
        default = f"p{number}-small"
    if name == "rhel-ai":
        inter_router, edge, model = 8000, 8001, 9000
    else:
        inter_router, edge = DEFAULT_INTER_ROUTER_PORT, DEFAULT_EDGE_PORT
        model = 10000 if number == 2 else 10000 + number
    return HostEntry(
        name=name,
        address=f"{block}.{number + 1}",
        role="provider",
        ports={
            "inter_router": inter_router,
            "edge": edge,
            "model": model,
            "local": model,
            "management": MANAGEMENT_PORT,
        },
        profiles=dict(profiles),
        default_profile=default,
        routing_key=f"model-api-{name}",
        # rhel-ai is a bootc host whose containers cannot write /tmp.
        tmp_writable=name != "rhel-ai",
    )


def plan_world(
    root: Path, block: str, spec: WorldSpec, *, world_id: str | None = None
) -> WorldInfo:
    """The hosts, addresses and ports of a new world in ``root`` using ``block``, as
    ``spec`` asks (``WorldSpec``); ``ValueError`` names a host the spec asks for that the
    world does not have."""
    layout = WorldLayout(root)
    hosts = [
        HostEntry(
            name="local",
            address=f"{block}.1",
            role="consumer",
            ports={
                "inter_router": DEFAULT_INTER_ROUTER_PORT,
                "edge": DEFAULT_EDGE_PORT,
                "management": MANAGEMENT_PORT,
            },
        )
    ]
    hosts += [_provider(i, name, block) for i, name in enumerate(provider_names(spec.providers))]
    unknown = sorted(spec.root_hosts - {h.name for h in hosts})
    if unknown:
        valid = ", ".join(h.name for h in hosts)
        raise ValueError(f"no SSH host {', '.join(unknown)} to make root (hosts: {valid})")
    for host in hosts:
        if host.name in spec.root_hosts:
            host.user, host.uid = "root", 0
        else:
            host.user, host.uid = _EXAMPLE_USERS.get(host.name, DEFAULT_USER), FIRST_UID
    kube = None
    if spec.kubernetes:
        crc = HostEntry(
            name="crc",
            address=f"{block}.254",
            ssh_port=0,
            role="kubernetes",
            ports={"api": KUBE_PORT, "management": MANAGEMENT_PORT},
        )
        hosts.append(crc)
        kube = KubeEntry(address=crc.address, kubeconfig=str(layout.kubeconfig))
    versions = dict(spec.skupper_versions)
    unknown = sorted(set(versions) - {h.name for h in hosts})
    if unknown:
        valid = ", ".join(h.name for h in hosts)
        raise ValueError(f"no host {', '.join(unknown)} in this world (hosts: {valid})")
    for host in hosts:
        if host.name in versions:
            host.skupper_version = versions[host.name]
    unknown = sorted(set(spec.host_quirks) - {h.name for h in hosts if h.role != "kubernetes"})
    if unknown:
        valid = ", ".join(h.name for h in hosts if h.role != "kubernetes")
        raise ValueError(f"no SSH host {', '.join(unknown)} for a quirk (hosts: {valid})")
    for host in hosts:
        host.quirks = list(spec.host_quirks.get(host.name, ()))
    unknown = sorted(spec.embeddings_hosts - {h.name for h in hosts if h.role == "provider"})
    if unknown:
        valid = ", ".join(h.name for h in hosts if h.role == "provider")
        raise ValueError(f"no provider {', '.join(unknown)} for --embeddings (providers: {valid})")
    for host in hosts:
        if host.name in spec.embeddings_hosts:
            host.embeddings = True
            host.ports["embed"] = host.ports["model"] + EMBED_PORT_OFFSET
    providers = {h.name for h in hosts if h.role == "provider"}
    unknown = sorted(set(spec.model_engines) - providers)
    if unknown:
        raise ValueError(
            f"no provider {', '.join(unknown)} for a model engine (providers: "
            f"{', '.join(sorted(providers))})"
        )
    for host in hosts:
        host.model_engine = spec.model_engines.get(host.name, host.model_engine)
    return WorldInfo(
        namespace=spec.namespace,
        id=world_id or uuid.uuid4().hex[:12],
        dir=str(layout.root),
        sshd=spec.sshd,
        block=block,
        hosts=hosts,
        kube=kube,
        model_server_command=spec.model_server_command,
        model_server_volumes=list(spec.model_server_volumes),
    )


def _candidate_blocks(root: Path) -> Iterator[str]:
    """Every 127.A.B block, starting at the one the directory's hash picks."""
    digest = hashlib.sha256(str(root.resolve()).encode()).digest()
    # 127.0.x is left alone: 127.0.0.1 is everybody's localhost.
    span = 254 * 256
    start = int.from_bytes(digest[:4], "big") % span
    for offset in range(span):
        n = (start + offset) % span
        yield f"127.{n // 256 + 1}.{n % 256}"


def block_free(block: str) -> bool:
    """Whether nobody listens on the block's local SSH address (127.A.B.1:2222)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((f"{block}.1", SSH_PORT))
        except OSError:
            return False
    return True


def allocate_block(root: Path, taken: set[str] | None = None) -> str:
    """The first free 127.A.B block for ``root``, from a hash of its resolved path."""
    for block in _candidate_blocks(root):
        if block in (taken or set()):
            continue
        if block_free(block):
            return block
    raise RuntimeError("no free 127.A.B.0/24 block for a sandbox world")


def render_topology_env(info: WorldInfo) -> str:
    """The topology.env the product is given for this world."""
    layout = WorldLayout(Path(info.dir))
    lines = [
        "# skupper-mcp sandbox world " + info.id + " (generated by `skupper-sandbox up`)",
        "",
        "PROVIDER_HOSTS=" + _quote(" ".join(h.name for h in info.providers)),
    ]
    for host in info.providers:
        p = host.prefix
        lines += [
            "",
            f"{p}SSH_HOST={host.address}",
            f"{p}SSH_PORT={host.ssh_port}",
            f"{p}SSH_USER={ssh_user(info, host)}",
            f"{p}PUBLIC_HOST={host.address}",
            f"{p}INTER_ROUTER_PORT={host.ports['inter_router']}",
            f"{p}EDGE_PORT={host.ports['edge']}",
            f"{p}SANS={host.address}",
            f"{p}SITE_NAME=hub-{host.name}",
            f"{p}NAMESPACE={info.namespace}",
            f"{p}MODEL_HOST=127.0.0.1",
            *_endpoint_lines(host),
            f"{p}TMPFS_WORKAROUND={'false' if host.tmp_writable else 'true'}",
        ]
    local = info.host("local")
    lines += [
        "",
        f"LOCAL_SITE_NAME={LOCAL_SITE_NAME}",
        f"LOCAL_NAMESPACE={info.namespace}",
        f"LOCAL_SSH_HOST={local.address}",
        f"LOCAL_SSH_PORT={local.ssh_port}",
        f"LOCAL_SSH_USER={ssh_user(info, local)}",
        f"LOCAL_INTER_ROUTER_PORT={local.ports['inter_router']}",
        f"LOCAL_EDGE_PORT={local.ports['edge']}",
        f"LOCAL_PUBLIC_HOST={local.address}",
        f"LOCAL_SANS={local.address}",
        f"LOCAL_LISTENER_HOST={local.address}",
    ]
    if info.kube is not None:
        first = info.providers[0]
        lines += [
            "",
            f"CRC_SITE_NAME={CRC_SITE_NAME}",
            f"CRC_NAMESPACE={CRC_NAMESPACE}",
            f"CRC_KUBECONFIG={_quote(info.kube.kubeconfig)}",
            f"CRC_CONTEXT={CRC_CONTEXT}",
            f"CRC_MODEL_PORT={CRC_MODEL_PORT}",
            f"CRC_ROUTING_KEY={first.routing_key}",
        ]
        if len(info.providers) > 1:
            lines.append(f"CRC_RHTEVAN_MODEL_PORT={CRC_RHTEVAN_MODEL_PORT}")
        embedding = [h for h in info.providers if h.embeddings]
        for i, host in enumerate(embedding):
            lines.append(f"CRC_{host.prefix}EMBED_PORT={CRC_EMBED_PORT + i}")
        lines.append(f"CRC_DIRECT_LINKS={first.name}")
    lines += [
        "",
        f"SSH_IDENTITY={_quote(str(layout.client_key))}",
        f"SSH_KNOWN_HOSTS={_quote(str(layout.known_hosts))}",
        "SSH_CONNECT_TIMEOUT=5",
        f"STATE_DIR={_quote(str(layout.root / 'state'))}",
    ]
    return "\n".join(lines) + "\n"


def _endpoint_lines(host: HostEntry) -> list[str]:
    """A provider's model variables: the single-port form, or (``--embeddings``) two
    endpoints, chat (the usual server, its routing key and local port kept) and embed."""
    p = host.prefix
    profiles = " ".join(f"{k}={v}" for k, v in host.profiles.items())
    lines = [
        f"MODEL_PORT={host.ports['model']}",
        f"LOCAL_PORT={host.ports['local']}",
        f"ROUTING_KEY={host.routing_key}",
        f"PROFILES={_quote(profiles)}",
        f"DEFAULT_PROFILE={host.default_profile}",
        f"MODEL_CONTAINER={MODEL_CONTAINER}",
    ]
    if not host.embeddings:
        return [p + line for line in lines]
    embed = f"{host.name}-embed={EMBED_MODEL_ID}"
    return (
        [f'{p}ENDPOINTS="chat embed"']
        + [f"{p}CHAT_{line}" for line in lines]
        + [
            f"{p}EMBED_MODEL_PORT={host.ports['embed']}",
            f"{p}EMBED_PROFILES={embed}",
            f"{p}EMBED_MODEL_CONTAINER={EMBED_CONTAINER}",
        ]
    )


def ssh_user(info: WorldInfo, host: HostEntry) -> str:
    """The user to log in as: the host's own, except with OpenSSH for a user this machine
    does not have (sshd knows only real users: it logs in as root, and the host still
    reports its own user once logged in)."""
    return "root" if info.sshd == "openssh" and not host.real_user else host.user


def _quote(value: str) -> str:
    return f'"{value}"' if (" " in value or not value) else value
