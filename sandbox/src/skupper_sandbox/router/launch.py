"""What the router image's ``launch.sh`` and ``configure.sh`` do before the router starts.

Both routers start this way (``seam.Router.config``), after skupper-router
``scripts/launch.sh``, ``scripts/configure.sh`` and ``scripts/expandvars.py`` at 3.4.2:

1. ``configure.sh`` writes ``/tmp/skrouterd.$QDROUTERD_CONF_TYPE`` (``conf`` by default): the
   inline config when ``$QDROUTERD_CONF`` holds ``{...}``, else the files it names (``:`` or
   ``,`` separated; a directory contributes its ``*.conf``), then expands ``$VAR`` and
   ``${VAR}`` line by line, leaving comment lines and unknown variables as they are. When
   ``/tmp`` cannot be written the redirection fails, bash prints why and ``set -e`` ends the
   script; ``launch.sh`` goes on.
2. ``launch.sh`` runs ``skrouterd -c /tmp/skrouterd.<type>`` only if that file exists, else
   plain ``skrouterd``, on the image's default config (standalone, one listener on
   ``0.0.0.0:amqp``).

The container's ``/tmp`` and mounts are host directories (``hostenv.container_path``). What
the sandbox adapts, and only in the copy skrouterd is given (never in the container's
``/tmp/skrouterd.json``): every address that means "this host" (``""``, ``0.0.0.0``,
``localhost``, ``127.0.0.1``...) becomes the host's own loopback address, since all hosts
share one network namespace, and the sslProfile paths become the host paths the mounts name.
The imitation reads the container's copy as it is (it binds the host's address itself).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skupper_sandbox import hostenv

IMAGE_HOME = "/home/skrouterd"  # QDROUTERD_HOME in the image
CONFIGURE_SH = f"{IMAGE_HOME}/bin/configure.sh"
# The lines of configure.sh whose redirection creates the output file.
_INLINE_WRITE_LINE, _FILES_WRITE_LINE = 35, 38
ADAPTED_NAME = "skrouterd-sandbox"
_PATH_ATTRIBUTES = ("caCertFile", "certFile", "privateKeyFile", "passwordFile", "trustedCertsFile")
_HOST_ENTITIES = ("listener", "connector", "tcpListener", "tcpConnector")
_VARIABLE = re.compile(r"\$(\w+|\{[^}]*\})")
_CONF_HOST = re.compile(r"^(\s*host\s*:\s*)(\S*)(\s*)$", re.MULTILINE)
# Addresses that mean "this host" inside a container on the host network.
_LOCAL_NAMES = {"", "0.0.0.0", "::", "localhost", "127.0.0.1", "::1", "ip6-localhost"}


def expand_line(line: str, env: Mapping[str, str]) -> str:
    """``os.path.expandvars`` against ``env``: unknown or malformed names stay as written."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("{"):
            name = name[1:-1]
        return env.get(name, match.group(0))

    return _VARIABLE.sub(value, line)


def expand_text(text: str, env: Mapping[str, str]) -> str:
    """``expandvars.py``: lines starting with ``#`` or without ``$`` are kept as they are."""
    return "".join(
        line if line.startswith("#") or "$" not in line else expand_line(line, env)
        for line in text.splitlines(keepends=True)
    )


def tmp_writable(host: hostenv.HostInfo, env: Mapping[str, str]) -> bool:
    """Whether the container can write its ``/tmp``: the host allows it, or a tmpfs is there
    (the emulated podman says which in ``SKMCP_SANDBOX_TMPFS``; in a real podman container,
    which has no such variable, ``--tmpfs /tmp`` is a tmpfs mounted there)."""
    if host.tmp_writable:
        return True
    if hostenv.TMPFS_VAR not in env:
        return _tmpfs_mounted("/tmp")
    tmpfs = json.loads(env.get(hostenv.TMPFS_VAR, "[]"))
    return any(str(entry).split(":", 1)[0].rstrip("/") == "/tmp" for entry in tmpfs)


def _tmpfs_mounted(path: str, mountinfo: str = "/proc/self/mountinfo") -> bool:
    """Whether this process's mount namespace has a tmpfs at ``path`` (proc(5): the mount
    point is the fifth field, the type the first after the ``-`` separator)."""
    try:
        lines = Path(mountinfo).read_text().splitlines()
    except OSError:
        return False
    found = False  # the last mount at a path is the one that shows
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and fields[4] == path and "-" in fields:
            found = fields[fields.index("-") + 1 :][:1] == ["tmpfs"]
    return found


def configure(
    env: Mapping[str, str], out_file: str, writable: bool
) -> tuple[str | None, list[str], list[str]]:
    """What ``configure.sh`` leaves: the expanded config text (None when the file could not
    be written) and the lines it prints on stdout and stderr."""
    conf = env.get("QDROUTERD_CONF", "")
    stdout: list[str] = []
    if "{" in conf and "}" in conf:
        if not writable:
            return None, stdout, [f"{CONFIGURE_SH}: line {_INLINE_WRITE_LINE}: {_denied(out_file)}"]
        text = conf + "\n"
    elif conf:
        if not writable:
            return None, stdout, [f"{CONFIGURE_SH}: line {_FILES_WRITE_LINE}: {_denied(out_file)}"]
        parts: list[str] = []
        for item in (p for p in re.split(r"[:,]", conf)):
            path = hostenv.container_path(item, env)
            if path.is_dir():
                parts += [f.read_text() for f in sorted(path.glob("*.conf"))]
            elif path.is_file():
                parts.append(path.read_text())
            else:
                stdout.append(f"No such file or directory: {item}")
        text = "".join(parts)
    else:
        return None, stdout, []
    return expand_text(text, env), stdout, []


def _denied(path: str) -> str:
    # As on rhel-ai (rootless podman, uid mapping): the directory is not writable.
    return f"{path}: Permission denied"


def _local(host_value: Any) -> bool:
    return str(host_value).strip("[]") in _LOCAL_NAMES


def adapt_json(text: str, host: hostenv.HostInfo, env: Mapping[str, str]) -> str:
    """The config skrouterd is given: local addresses -> the host's, container paths -> host
    paths. Anything else (including a config skrouterd will refuse) is passed on as it is."""
    try:
        entities = json.loads(text)
    except ValueError:
        return text  # skrouterd reports the parse error itself
    if not isinstance(entities, list):
        return text
    for entity in entities:
        if not (isinstance(entity, list) and len(entity) == 2 and isinstance(entity[1], dict)):
            continue
        kind, attributes = entity
        if kind in _HOST_ENTITIES and _local(attributes.get("host", "")):
            attributes["host"] = host.address
        if kind == "sslProfile":
            for key in _PATH_ATTRIBUTES:
                if isinstance(attributes.get(key), str):
                    attributes[key] = str(hostenv.container_path(attributes[key], env))
    return json.dumps(entities, indent=2) + "\n"


def adapt_conf(text: str, host: hostenv.HostInfo) -> str:
    """The same for the ``conf`` format: every local ``host:`` becomes the host's address."""

    def replace(match: re.Match[str]) -> str:
        value = match.group(2)
        return (
            match.group(0) if not _local(value) else match.group(1) + host.address + match.group(3)
        )

    return _CONF_HOST.sub(replace, text)
