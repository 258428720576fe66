"""A container's mounts as ``podman inspect`` reports them, back into the ``-v`` options that
make them again. Pure.

podman's inspect splits a mount's options (``parseMountOptionsForInspect``,
``libpod/container_inspect.go@v5.8.2:339-370``, the same @v4.3.1): ``ro`` becomes ``RW:
false``, the SELinux relabel ``z``/``Z`` becomes ``Mode``, a propagation becomes
``Propagation`` (``rprivate`` when none was asked), and the rest stay in ``Options`` (podman
adds ``rbind``, the default of ``-v``). A container made again from it must keep every one:
a read-only mount made writable, or a private relabel (``Z``) made shared (``z``), is not
the container that was there.
"""

from __future__ import annotations

from typing import Any

#: ``Options`` a ``-v`` takes back as they are (podman's ``ProcessOptions``): what podman
#: adds by default (``rbind``) is left out.
_KEPT_OPTIONS = frozenset(
    {"bind", "nosuid", "suid", "nodev", "dev", "noexec", "exec", "U", "O", "copy", "nocopy"}
)
_RELABEL = ("z", "Z")
_DEFAULT_PROPAGATION = "rprivate"


def volume_spec(mount: Any) -> str | None:
    """``SOURCE:DESTINATION[:OPTIONS]`` for ``podman create -v``, from one entry of
    inspect's ``Mounts``; None for an entry that is not a mount podman can make again from
    it (no source or destination, or not a bind or named volume)."""
    if not isinstance(mount, dict):
        return None
    kind = mount.get("Type") or "bind"
    source = mount.get("Name") if kind == "volume" else mount.get("Source")
    destination = mount.get("Destination")
    if kind not in ("bind", "volume") or not isinstance(source, str) or not source:
        return None
    if not isinstance(destination, str) or not destination:
        return None
    options: list[str] = []
    if mount.get("RW") is False:
        options.append("ro")
    mode = mount.get("Mode")
    if mode in _RELABEL:
        options.append(str(mode))
    propagation = mount.get("Propagation")
    if isinstance(propagation, str) and propagation and propagation != _DEFAULT_PROPAGATION:
        options.append(propagation)
    extra = mount.get("Options")
    for option in extra if isinstance(extra, list) else []:
        if option in _KEPT_OPTIONS and option not in options:
            options.append(str(option))
    spec = f"{source}:{destination}"
    return f"{spec}:{','.join(options)}" if options else spec
