"""Where an SSH host really is: the topology's target read through the user's OpenSSH
client config (``~/.ssh/config``), as the user's own ``ssh`` would read it.

``ssh`` takes HostName, Port, User, IdentityFile and ProxyJump from the config's ``Host``
blocks that match the name it is given; a value given on its command line wins. Here the
topology is that command line: its ``*_SSH_PORT``, ``*_SSH_USER`` (or ``user@``) and
``SSH_IDENTITY`` win where set, the config fills in the rest. The file is parsed by
asyncssh's own reader (the one ``asyncssh.connect`` uses), so the connection and this
account of it agree. Each value says where it came from (``SSHSetting.source``).
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path

from skupper_mcp.connectors.base import SSHOptions, SSHTarget
from skupper_mcp.errors import SiteConfigError
from skupper_mcp.results import SSHSetting

__all__ = [
    "DEFAULT_PORT",
    "TOPOLOGY",
    "ResolvedSSH",
    "config_path",
    "jump_hops",
    "resolve",
]

DEFAULT_PORT = 22
#: The source of a value the topology gave.
TOPOLOGY = "topology.env"
#: The topology variable naming the config file (the one to fix or change).
VARIABLE = "SSH_CONFIG"
#: How many ProxyJump hops are followed: a config whose hops name each other loops.
MAX_HOPS = 4


@dataclass(frozen=True)
class ResolvedSSH:
    """How to dial one SSH host, every value decided."""

    alias: str
    """The name the topology (or a ProxyJump hop) gave: the config's ``Host`` it matches."""
    host: str
    port: int
    user: str | None
    identity_files: tuple[Path, ...]
    proxy_jump: str | None
    """The config's ProxyJump (``[user@]host[:port]``, comma-separated hops), or None."""
    config_file: Path | None
    """The config file read, when there is one."""
    settings: tuple[SSHSetting, ...]

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def config_path(options: SSHOptions) -> Path | None:
    """The OpenSSH client config to read: the options' own, else ``~/.ssh/config`` when it
    exists (asyncssh's default too). None when there is none."""
    if options.ssh_config is not None:
        return options.ssh_config
    try:
        default = Path("~/.ssh/config").expanduser()
    except RuntimeError:  # no home directory: no config, as for ssh
        return None
    return default if default.is_file() else None


def resolve(name: str, target: SSHTarget, options: SSHOptions) -> ResolvedSSH:
    """``target`` read through the config file. Raises ``SiteConfigError`` (for ``name``,
    the topology's host) when the file cannot be read or parsed."""
    path = config_path(options)
    found = _read_config(name, path, target.host) if path is not None else {}
    source = str(path)

    def pick(option: str, given: object, default: object) -> tuple[object, str]:
        if given is not None:
            return given, TOPOLOGY
        if found.get(option) is not None:
            return found[option], source
        return default, "default"

    settings: list[SSHSetting] = []
    host = str(found.get("Hostname") or target.host)
    settings.append(_setting("HostName", host, source if found.get("Hostname") else TOPOLOGY))
    port, port_from = pick("Port", target.port, DEFAULT_PORT)
    settings.append(_setting("Port", str(port), port_from))
    user, user_from = pick("User", target.user, None)
    if user is not None:
        settings.append(_setting("User", str(user), user_from))
    identities: tuple[Path, ...] = ()
    if options.identity_files:
        identities = options.identity_files
        settings += [_setting("IdentityFile", str(p), TOPOLOGY) for p in identities]
    elif found.get("IdentityFile"):
        # ssh passes over an IdentityFile that is not there; so does this
        listed = [Path(str(p)).expanduser() for p in _as_list(found["IdentityFile"])]
        identities = tuple(p for p in listed if p.is_file())
        settings += [_setting("IdentityFile", str(p), source) for p in identities]
    jump = found.get("ProxyJump")
    proxy_jump = None if jump in (None, "", "none") else str(jump)
    if proxy_jump is not None:
        settings.append(_setting("ProxyJump", proxy_jump, source))
    return ResolvedSSH(
        alias=target.host,
        host=host,
        port=int(str(port)),
        user=None if user is None else str(user),
        identity_files=identities,
        proxy_jump=proxy_jump,
        config_file=path,
        settings=tuple(settings),
    )


def jump_hops(name: str, proxy_jump: str) -> list[SSHTarget]:
    """The hops of a ProxyJump value (``[user@]host[:port]``, comma-separated), first first."""
    hops = []
    for word in proxy_jump.split(","):
        user, _, rest = word.strip().rpartition("@")
        host, colon, port = rest.rpartition(":") if rest.count(":") == 1 else ("", "", "")
        if not colon:
            host = rest
        if not host or (colon and not port.isdigit()):
            raise SiteConfigError(
                name,
                f"ProxyJump {proxy_jump!r} in the SSH config has a hop {word!r} it cannot read",
                variable=VARIABLE,
            )
        hops.append(SSHTarget(host=host, port=int(port) if colon else None, user=user or None))
    if len(hops) > MAX_HOPS:
        raise SiteConfigError(
            name, f"ProxyJump {proxy_jump!r} has more than {MAX_HOPS} hops", variable=VARIABLE
        )
    return hops


def _read_config(name: str, path: Path, alias: str) -> dict[str, object]:
    """The options the config file gives ``alias`` (asyncssh's parser: Host and Match
    blocks, Include, %-tokens)."""
    from asyncssh.config import SSHClientConfig

    try:
        local_user = getpass.getuser()
    except (KeyError, OSError):
        local_user = ""
    try:
        config = SSHClientConfig.load(None, [path], False, False, False, local_user, (), alias, ())
    except OSError as exc:
        raise SiteConfigError(
            name, f"cannot read the SSH config {path}: {exc}", variable=VARIABLE
        ) from exc
    except Exception as exc:  # asyncssh.ConfigParseError, or a value it cannot read
        raise SiteConfigError(
            name, f"the SSH config {path} cannot be parsed: {exc}", variable=VARIABLE
        ) from exc
    return {
        option: config.get(option)
        for option in ("Hostname", "Port", "User", "IdentityFile", "ProxyJump")
    }


def _setting(option: str, value: str, source: str) -> SSHSetting:
    return SSHSetting(option=option, value=value, source=source)


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else [value]
