"""What a host that was dialled and not reached needs, by why (``errors.Unreached``, from
the socket's error): one text for the precheck's hint and diagnose's finding, so the two
never give different advice for one failure."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Unreached


@dataclass(frozen=True)
class UnreachedAdvice:
    """Why the host was not reached (``cause``) and what to do (``fix``)."""

    cause: str
    fix: str


def unreached_advice(unreached: Unreached, host: str, prefix: str) -> UnreachedAdvice:
    """The cause and fix of ``host`` not reached for ``unreached``; ``prefix`` is its
    topology.env prefix (``GPU1``, ``LOCAL``), naming the variables to fix."""
    ssh_host = f"{prefix}_SSH_HOST"
    match unreached:
        case Unreached.NAME:
            return UnreachedAdvice(
                cause=f"{host}'s SSH host name does not resolve on this machine (DNS or "
                "/etc/hosts): nothing was dialled",
                fix=f"correct {ssh_host} in topology.env (or the HostName your SSH config "
                "gives it), or make the name resolve here: add it to DNS or /etc/hosts, or "
                "use the host's IP address",
            )
        case Unreached.CLOSED:
            return UnreachedAdvice(
                cause=f"{host}'s address answered, but nothing listens on its SSH port: the "
                "SSH server is stopped, or listens on another port",
                # the unit is sshd on Fedora/RHEL/SUSE/Arch, ssh on Debian/Ubuntu
                fix=f"start the SSH server on {host} (`systemctl start sshd` on Fedora or "
                "RHEL, `systemctl start ssh` on Debian or Ubuntu), or set "
                f"{prefix}_SSH_PORT in topology.env to the port it listens on",
            )
        case Unreached.NO_ROUTE:
            return UnreachedAdvice(
                cause=f"this machine has no route to {host}'s address: the host is down or "
                "on a network this machine is not on",
                fix=f"bring {host} up, or join its network (a VPN, say); check {ssh_host} "
                "in topology.env is its address",
            )
        case Unreached.SILENT:
            return UnreachedAdvice(
                cause=f"nothing answered at {host}'s address in time: the host is down, a "
                "firewall drops its SSH port, or its SSH server is too slow to answer",
                fix=f"start {host}, or open its SSH port in its firewall; on a slow link "
                "raise SSH_CONNECT_TIMEOUT in topology.env",
            )
