"""Faults on demand (docs/sandbox.md section 8).

``down`` and ``blackhole`` are iptables rules in the world's own chain ``SKMCP-<id>``,
jumped to from INPUT: every packet to the host's address that does not come from it,
and every packet from it to elsewhere, is rejected with a TCP reset (down) or dropped
(blackhole). The host's processes keep running. ``slow`` is a delay every SSH command
on the host waits first; ``kill-router`` SIGKILLs the host's router containers; the
Kubernetes API's faults are a file it rereads on SIGHUP.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Literal

NetworkFault = Literal["down", "blackhole"]
KubeFault = Literal["unauthenticated", "down"]

IPTABLES = "iptables"
_COMMENT_PREFIX = "skmcp"


class FaultError(RuntimeError):
    """A fault could not be applied (iptables missing or refusing, unknown host...)."""


def chain_name(world_id: str) -> str:
    """The world's iptables chain (chain names are limited to 28 characters)."""
    return f"SKMCP-{world_id[:12]}"


def _jump_comment(world_id: str) -> str:
    return f"skupper-mcp sandbox {world_id}"


def _host_comment(host: str) -> str:
    return f"{_COMMENT_PREFIX}:{host}"


def _iptables(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(
            [IPTABLES, "-w", *args], capture_output=True, text=True, check=False
        )
    except FileNotFoundError as exc:
        raise FaultError("iptables is not installed: network faults need it") from exc
    if check and result.returncode != 0:
        raise FaultError(f"iptables {' '.join(args)} failed: {result.stderr.strip()}")
    return result


def ensure_chain(world_id: str) -> str:
    """Create the world's chain and its jump from INPUT on first use."""
    chain = chain_name(world_id)
    if _iptables("-n", "-L", chain, check=False).returncode != 0:
        _iptables("-N", chain)
    jump = ["INPUT", "-j", chain, "-m", "comment", "--comment", _jump_comment(world_id)]
    if _iptables("-C", *jump, check=False).returncode != 0:
        _iptables("-I", *jump)
    return chain


def _rules(chain: str) -> list[str]:
    result = _iptables("-S", chain, check=False)
    if result.returncode != 0:
        return []
    return [line for line in result.stdout.splitlines() if line.startswith(f"-A {chain} ")]


def _comment(words: list[str]) -> str | None:
    if "--comment" not in words:
        return None
    return words[words.index("--comment") + 1]


def network_faults(world_id: str) -> dict[str, str]:
    """Host name -> ``down`` | ``blackhole`` for every host with rules in the chain."""
    faults: dict[str, str] = {}
    for rule in _rules(chain_name(world_id)):
        words = shlex.split(rule)
        comment = _comment(words)
        if comment and comment.startswith(_COMMENT_PREFIX + ":"):
            faults[comment.split(":", 1)[1]] = "blackhole" if "DROP" in words else "down"
    return faults


def _port_comment(host: str, port: int) -> str:
    return f"{_COMMENT_PREFIX}-port:{host}:{port}"


def clear_network(world_id: str, host: str) -> None:
    """Remove every rule of ``host`` from the world's chain (its firewalled ports too)."""
    for rule in _rules(chain_name(world_id)):
        words = shlex.split(rule)
        comment = _comment(words) or ""
        if comment == _host_comment(host) or comment.startswith(_port_comment(host, 0)[:-1]):
            _iptables("-D", *words[1:], check=False)


def set_firewall(world_id: str, host: str, address: str, port: int) -> None:
    """Drop TCP to ``host``'s ``port`` from anywhere else, as a cloud security group that
    does not open the port does: the host and its other ports stay reachable."""
    chain = ensure_chain(world_id)
    comment = ["-m", "comment", "--comment", _port_comment(host, port)]
    _iptables(
        "-A", chain, "-d", address, "!", "-s", address, "-p", "tcp", "--dport", str(port),
        *comment, "-j", "DROP",
    )  # fmt: skip


def set_network(world_id: str, host: str, address: str, kind: NetworkFault) -> None:
    """Make ``host`` unreachable: ``down`` refuses (TCP reset), ``blackhole`` drops."""
    chain = ensure_chain(world_id)
    clear_network(world_id, host)
    comment = ["-m", "comment", "--comment", _host_comment(host)]
    to_host = ["-d", address, "!", "-s", address]
    from_host = ["-s", address, "!", "-d", address]
    if kind == "down":
        # The resets this chain sends on the host's behalf come "from" the host: let them out.
        _iptables(
            "-A", chain, *from_host, "-p", "tcp", "--tcp-flags", "RST", "RST", *comment,
            "-j", "RETURN",
        )  # fmt: skip
    for match in (to_host, from_host):
        if kind == "down":
            _iptables(
                "-A", chain, *match, "-p", "tcp", *comment,
                "-j", "REJECT", "--reject-with", "tcp-reset",
            )  # fmt: skip
            _iptables("-A", chain, *match, *comment, "-j", "REJECT")
        else:
            _iptables("-A", chain, *match, *comment, "-j", "DROP")


def remove_chain(world_id: str) -> None:
    """Remove the world's chain and its jump (nothing to do when they do not exist)."""
    chain = chain_name(world_id)
    jump = ["INPUT", "-j", chain, "-m", "comment", "--comment", _jump_comment(world_id)]
    while _iptables("-C", *jump, check=False).returncode == 0:
        _iptables("-D", *jump, check=False)
    if _iptables("-n", "-L", chain, check=False).returncode == 0:
        _iptables("-F", chain, check=False)
        _iptables("-X", chain, check=False)


def slow_delay(host_dir: Path) -> float:
    """Seconds every SSH command on the host waits first (``fault HOST slow S``)."""
    try:
        data = json.loads((host_dir / "fault.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return 0.0
    return float(data.get("slow", 0) or 0)


def set_slow(host_dir: Path, seconds: float) -> None:
    """Delay every SSH command on the host by ``seconds``."""
    if seconds < 0:
        raise FaultError(f"slow needs a number of seconds >= 0, not {seconds}")
    (host_dir / "fault.json").write_text(json.dumps({"slow": seconds}) + "\n")


def clear_slow(host_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (host_dir / "fault.json").unlink()


def kill_routers(home: Path) -> list[str]:
    """SIGKILL the process of every running ``*-skupper-router`` container; their names."""
    from skupper_sandbox import real_hosts, real_podman
    from skupper_sandbox.emulated.podman import containers

    killed = []
    if real_podman.is_real(home.parent):  # the process podman's listing names
        for listed in real_hosts.host_containers(home.parent):
            if listed.name.endswith("-skupper-router") and listed.state == "running":
                with contextlib.suppress(ProcessLookupError):
                    os.kill(listed.pid, signal.SIGKILL)
                    killed.append(listed.name)
        return killed
    for container in containers.list_all(home):
        if container.name.endswith("-skupper-router") and containers.running(container):
            assert container.pid is not None
            with contextlib.suppress(ProcessLookupError):
                os.kill(container.pid, signal.SIGKILL)
                killed.append(container.name)
    return killed


def set_kube_fault(fault_file: Path, mode: KubeFault | None, kube_pid: int | None) -> None:
    """Write the API's fault mode (None restores it) and tell the API to reread it."""
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            fault_file.unlink()
    else:
        fault_file.parent.mkdir(parents=True, exist_ok=True)
        fault_file.write_text(json.dumps({"mode": mode}) + "\n")
    if kube_pid is None:
        raise FaultError("the Kubernetes API is not running in this sandbox")
    try:
        os.kill(kube_pid, signal.SIGHUP)
    except ProcessLookupError as exc:
        raise FaultError("the Kubernetes API process is gone") from exc


def kube_fault(fault_file: Path) -> str | None:
    """The API's current fault mode, if any."""
    try:
        return str(json.loads(fault_file.read_text()).get("mode") or "") or None
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _namespace_homes(host_dir: Path) -> list[Path]:
    """Each Skupper namespace home of a host: its user's data home and, for a root host,
    ``/var/lib/skupper`` in its sysroot (emulated/skupper/paths.py's ``data_home``)."""
    bases = [
        host_dir / "home" / ".local" / "share" / "skupper" / "namespaces",
        host_dir / "sysroot" / "var" / "lib" / "skupper" / "namespaces",
    ]
    return [ns for base in bases if base.is_dir() for ns in sorted(base.iterdir())]


def age_certificate(host_dir: Path, name: str, days: float) -> list[str]:
    """Make the certificate ``name`` of every namespace of the host end ``days`` from now
    (``fault HOST cert-ends DAYS NAME``): a CA under runtime/issuers re-signed by its
    own key (what it issued still verifies), any other under runtime/certs by the CA that
    issued it. The running router keeps what it loaded, as skrouterd does until it
    restarts. Returns the files changed, relative to the host."""
    from skupper_sandbox import certs

    changed = []
    for ns in _namespace_homes(host_dir):
        runtime = ns / "runtime"
        ca_dir = runtime / "issuers" / name
        if (ca_dir / "tls.crt").is_file():
            targets = [ca_dir / f for f in ("tls.crt", "ca.crt")]
            signer = ca_dir / "tls.key"
            # every copy of the CA beside a certificate it issued ends with it
            targets += [
                d / "ca.crt"
                for d in (runtime / "certs").glob("*")
                if (d / "ca.crt").is_file()
                and (d / "ca.crt").read_bytes() == (ca_dir / "tls.crt").read_bytes()
            ]
        else:
            targets = [runtime / "certs" / name / "tls.crt"]
            signer = runtime / "issuers" / "skupper-site-ca" / "tls.key"
        if not targets[0].is_file() or not signer.is_file():
            continue
        new = certs.aged(targets[0].read_bytes(), signer.read_bytes(), days)
        for target in targets:
            if target.is_file():
                stat = target.stat()
                target.write_bytes(new)
                with contextlib.suppress(PermissionError):
                    os.chown(target, stat.st_uid, stat.st_gid)
                changed.append(str(target.relative_to(host_dir)))
    return changed
