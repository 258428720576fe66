"""The precheck's remote script for a podman site and the pure parsers of its output.

The script prints one tagged line per fact (``@@podman podman version 4.9.3``), so the
whole site is read with one command and parsing never depends on the remote locale.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from skupper_mcp.connectors.shell import quote, script
from skupper_mcp.facts.framing import ONE_LINE
from skupper_mcp.facts.names import PODMAN_SOCKET_UNIT, VERSION_COMMAND
from skupper_mcp.facts.private_keys import MAX_LISTED, OpenKey, open_keys_listing, parse_open_key
from skupper_mcp.facts.skupper_version import SkupperVersion, parse_skupper_version

_TAG = re.compile(r"@@([a-z-]+)(?: (.*))?")
_WILDCARDS = {"0.0.0.0", "::"}


def site_facts_script(namespace: str, *, with_ports: bool) -> str:
    """The script that prints a podman site's facts. ``with_ports`` adds the listening TCP
    sockets and the ports our router is configured for (needed on the local site)."""
    lines = [
        "if command -v podman >/dev/null 2>&1; then",
        '  echo "@@podman $(podman --version 2>&1 | head -n 1)"',
        "else echo @@podman-missing; fi",
        "if command -v skupper >/dev/null 2>&1; then",
        f"  out=$({VERSION_COMMAND} 2>&1); rc=$?",
        "  printf '%s\\n' \"$out\" | sed 's/^/@@skupper /'",
        '  echo "@@skupper-rc $rc"',
        "else echo @@skupper-missing; fi",
        "if out=$($SKMCP_CTL show --property=LoadState podman.socket 2>&1); then",
        "  echo @@systemd-ok",
        "else printf '%s\\n' \"$out\" | head -n 3 | sed 's/^/@@systemd-error /'; fi",
        f'echo "@@podman-socket $($SKMCP_CTL is-active {PODMAN_SOCKET_UNIT} 2>/dev/null'
        f' | {ONE_LINE})"',
        # root runs Skupper under the system manager: lingering does not apply
        'if [ "$(id -u)" = 0 ]; then echo @@root;',
        "elif command -v loginctl >/dev/null 2>&1; then",
        '  loginctl show-user "$(id -un)" --property=Linger 2>&1 | head -n 1'
        " | sed 's/^/@@linger /'",
        "else echo @@linger-missing; fi",
    ]
    namespace_dir = f'"$SKMCP_DATA"/namespaces/{quote(namespace)}'
    # one line per key file others may read: a name cannot start a line (open_keys_listing)
    lines.append(f"{open_keys_listing(namespace_dir)} | sed 's/^/@@open-key /'")
    if with_ports:
        config = f"{namespace_dir}/runtime/router/skrouterd.json"
        lines += [
            "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null"
            ' | awk \'$4 == "0A" {print "@@listen " $2}\'',
            f"cfg={config}",
            'if [ -f "$cfg" ]; then',
            '  grep -oE \'"port": *"?[0-9]+\' "$cfg" | grep -oE \'[0-9]+$\''
            " | sed 's/^/@@router-port /'",
            "fi",
        ]
    lines.append("echo @@end")
    return script(*lines)


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

    @property
    def skupper(self) -> SkupperVersion:
        """What ``skupper version`` answered."""
        return parse_skupper_version("\n".join(self.skupper_lines), self.skupper_exit)


def parse_site_facts(stdout: str) -> SiteFacts:
    """Parse the tagged lines of ``site_facts_script``; unknown lines are ignored."""
    facts = SiteFacts()
    # only newlines end a line: a carriage return inside a host's text must not start one
    for line in stdout.split("\n"):
        match = _TAG.fullmatch(line.rstrip("\r"))
        if not match:
            continue
        tag, value = match.group(1), match.group(2) or ""
        if tag == "podman":
            facts.podman = value.strip() or None
        elif tag == "skupper":
            facts.skupper_lines.append(value)
        elif tag == "skupper-rc" and value.strip().isascii() and value.strip().isdigit():
            facts.skupper_exit = int(value.strip())
        elif tag == "skupper-missing":
            facts.skupper_missing = True
        elif tag == "systemd-ok":
            facts.systemd_ok = True
        elif tag == "systemd-error":
            facts.systemd_error.append(value.strip())
        elif tag == "podman-socket":
            facts.podman_socket = value.strip() or None
        elif tag == "linger":
            facts.linger = value.strip()
        elif tag == "root":
            facts.root = True
        elif tag == "listen":
            socket_address = parse_proc_net_address(value.strip())
            if socket_address:
                facts.listening.add(socket_address)
        elif tag == "router-port" and value.strip().isascii() and value.strip().isdigit():
            facts.router_ports.add(int(value.strip()))
        elif tag == "open-key":
            key = parse_open_key(value)
            if key is not None and len(facts.open_keys) < MAX_LISTED:
                facts.open_keys.append(key)
        elif tag == "end":
            facts.complete = True
    return facts


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
