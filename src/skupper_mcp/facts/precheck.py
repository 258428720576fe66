"""The precheck's remote script for a podman site and the pure parsers of its output.

The script (``scripts/precheck.sh``) prints each fact's text framed (``framing``: a marker of
ours, then the host's lines stuffed), so the whole site is read with one command, no host
text can fake a fact, and a tool's warnings on stderr stay out of its answer.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from skupper_mcp.connectors.shell import program
from skupper_mcp.facts.framing import split_frames
from skupper_mcp.facts.names import PODMAN_SOCKET_UNIT, VERSION_COMMAND
from skupper_mcp.facts.private_keys import MAX_LISTED, OpenKey, open_keys
from skupper_mcp.facts.skupper_version import SkupperVersion, parse_skupper_version

_WILDCARDS = {"0.0.0.0", "::"}


def site_facts_script(namespace: str, *, with_ports: bool) -> str:
    """The script that prints a podman site's facts (``scripts/precheck.sh``). ``with_ports``
    adds the listening TCP sockets and the ports our router is configured for (needed on the
    local site)."""
    return program(
        "precheck.sh",
        namespace,
        int(with_ports),
        VERSION_COMMAND,
        PODMAN_SOCKET_UNIT,
        MAX_LISTED,
    )


@dataclass
class SiteFacts:
    """What a podman site reported."""

    complete: bool = False
    podman: str | None = None
    skupper_lines: list[str] = field(default_factory=list)
    skupper_exit: int | None = None
    skupper_missing: bool = False
    systemd_ok: bool = False
    systemd_error: list[str] = field(default_factory=list)
    linger: str | None = None
    podman_socket: str | None = None  # systemctl is-active podman.socket
    root: bool = False
    listening: set[tuple[str, int]] = field(default_factory=set)
    router_ports: set[int] = field(default_factory=set)
    open_keys: list[OpenKey] = field(default_factory=list)  # private keys others may read
    distribution: list[str] = field(default_factory=list)  # /etc/os-release ID, then ID_LIKE

    @property
    def lingering(self) -> bool | None:
        """Whether ``loginctl show-user -p Linger`` said ``Linger=yes`` (None: loginctl did
        not answer): the one reading of its word."""
        if self.linger is None:
            return None
        return self.linger.lower().endswith("=yes")

    @property
    def skupper(self) -> SkupperVersion:
        """What ``skupper version`` answered."""
        return parse_skupper_version("\n".join(self.skupper_lines), self.skupper_exit)


def parse_site_facts(stdout: str) -> SiteFacts:
    """Parse the frames of ``site_facts_script``; a line outside a frame is ignored."""
    facts = SiteFacts()
    rc: dict[str, int] = {}
    bodies = _frame_bodies(facts, stdout, rc)
    written = {name: [line for line in lines if line.strip()] for name, lines in bodies.items()}
    if "podman" in written:
        facts.podman = next(iter(written["podman"]), "").strip() or None
    if "skupper" in bodies:
        facts.skupper_lines = written["skupper"]
        facts.skupper_exit = rc.get("skupper")
    if rc.get("systemd") == 0:
        facts.systemd_ok = True
    elif "systemd" in bodies:
        facts.systemd_error = [line.strip() for line in written["systemd"][:3]]
    if "linger" in bodies:
        facts.linger = next(iter(written["linger"]), "").strip()
    _ports(facts, written)
    facts.open_keys = open_keys(written.get("open-keys", []))
    facts.distribution = distribution_ids(written.get("os-release", []))
    return facts


def _frame_bodies(facts: SiteFacts, stdout: str, rc: dict[str, int]) -> dict[str, list[str]]:
    """Each section's lines (and its exit status into ``rc``); the markers that are facts
    of their own set them on ``facts``."""
    section = ""
    bodies: dict[str, list[str]] = {}
    for frame in split_frames(stdout):
        tag, value = frame.tag, frame.argument
        if tag == "section":
            section = value
            bodies[section] = [line.removesuffix("\r") for line in frame.lines]
        elif tag == "rc" and value.isascii() and value.isdigit():
            rc[section] = int(value)
        elif tag == "podman-socket":
            facts.podman_socket = value or None
        elif tag == "skupper-missing":
            facts.skupper_missing = True
        elif tag == "root":
            facts.root = True
        elif tag == "end":
            facts.complete = True
    return bodies


def _ports(facts: SiteFacts, written: dict[str, list[str]]) -> None:
    """The addresses something listens on, and the ports the router was given."""
    for line in written.get("listen", []):
        socket_address = parse_proc_net_address(line.strip())
        if socket_address:
            facts.listening.add(socket_address)
    for line in written.get("router-ports", []):
        if line.strip().isascii() and line.strip().isdigit():
            facts.router_ports.add(int(line.strip()))


def distribution_ids(lines: Iterable[str]) -> list[str]:
    """The distribution ids of ``/etc/os-release`` lines: ID, then each of ID_LIKE (a
    value may be quoted); what is not ``ID=`` or ``ID_LIKE=`` is left out."""
    values: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.strip().partition("=")
        if sep and key in ("ID", "ID_LIKE"):
            values[key] = value.strip().strip("\"'").lower()
    return [word for key in ("ID", "ID_LIKE") for word in values.get(key, "").split()]


#: The install command of each family's package manager, by the ids os-release names.
INSTALLERS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"debian", "ubuntu"}), "sudo apt-get install"),
    (frozenset({"fedora", "rhel", "centos"}), "sudo dnf install"),
    (frozenset({"suse", "opensuse", "sles"}), "sudo zypper install"),
    (frozenset({"arch"}), "sudo pacman -S"),
)


def install_command(distribution: Sequence[str], package: str) -> str | None:
    """How this distribution installs ``package`` (its ID first, then what it is like);
    None for one we do not know."""
    for name in distribution:
        for ids, command in INSTALLERS:
            if name in ids:
                return f"{command} {package}"
    return None


def parse_proc_net_address(text: str) -> tuple[str, int] | None:
    """Decode a /proc/net/tcp{,6} local address ``0100007F:2328`` -> ("127.0.0.1", 9000)."""
    address_hex, sep, port_hex = text.partition(":")
    try:
        port = int(port_hex, 16)
        raw = bytes.fromhex(address_hex)
    except ValueError:
        return None
    if not sep or len(raw) not in (4, 16):
        return None
    # the kernel prints each 32-bit word in host (little-endian) order
    packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(packed)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped  # a dual-stack socket bound to an IPv4 address
    return str(address), port


def ports_bound(
    listening: Iterable[tuple[str, int]], host: str, ports: Iterable[int]
) -> dict[int, bool]:
    """For each port, whether something listens on it at ``host`` or on a wildcard."""
    addresses = set(_WILDCARDS)
    try:
        addresses.add(str(ipaddress.ip_address(host)))
    except ValueError:
        addresses.add("127.0.0.1")  # a name such as localhost
    bound = {(address, port) for address, port in listening if address in addresses}
    return {port: any((address, port) in bound for address in addresses) for port in ports}
