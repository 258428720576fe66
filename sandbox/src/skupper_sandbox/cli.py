"""``skupper-sandbox up|status|fault|down``: run a simulated Skupper network.

The ``skupper-sandbox`` command of the skupper-mcp-sandbox distribution; also
``python -m skupper_sandbox`` (or ``python -m skupper_sandbox.cli``). The command line is a
contract: the tests, ``make demo`` and ``docs/sandbox.md`` use it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from skupper_sandbox import engines, faults, hostenv, quirks, reboot
from skupper_sandbox.layout import (
    DEFAULT_SKUPPER_VERSION,
    MODEL_CONTAINER,
    WorldInfo,
    WorldLayout,
    WorldSpec,
    allocate_block,
    plan_world,
    ssh_user,
)
from skupper_sandbox.netprobe import port_open
from skupper_sandbox.quiet import library_warnings_to_log
from skupper_sandbox.router.release import ROUTER_VERSIONS

#: How long a command a verb runs on a host over SSH may take.
HOST_COMMAND_TIMEOUT = 30.0

if TYPE_CHECKING:
    from skupper_sandbox.real_podman import Choice

DEFAULT_DIR = Path(".sandbox")
READY_TIMEOUT = 30.0
CUSTOM_MODEL_READY_TIMEOUT = 660.0
DAEMON_STOP_TIMEOUT = 10.0
SWEEP_TIMEOUT = 10.0
_GENERATED = ("hosts", "kube", "logs", "ssh", "bin")
_GENERATED_FILES = ("world.json", "topology.env", "known_hosts", "ready", "daemon.pid")


class SandboxError(Exception):
    """A sandbox command cannot do what was asked; the message says what to do."""


# --- processes ------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes: it holds no socket and runs nothing.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _all_pids() -> Iterator[int]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            yield int(entry.name)


def world_processes(world_id: str) -> list[int]:
    """Every live process whose environment carries ``SKMCP_SANDBOX_ID=<world_id>``."""
    mine = {os.getpid(), os.getppid()}
    return [
        pid
        for pid in _all_pids()
        if pid not in mine
        and _environ(pid).get(hostenv.WORLD_ID_VAR) == world_id
        and _pid_alive(pid)
    ]


def daemon_pid(layout: WorldLayout) -> int | None:
    """The world daemon's pid if it is running in this directory."""
    try:
        pid = int(layout.daemon_pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    if _pid_alive(pid) and "skupper_sandbox.world" in _cmdline(pid):
        return pid
    return None


def _wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = [p for p in pids if _pid_alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if _pid_alive(p)]
    return alive


# --- up -------------------------------------------------------------------------------


def _clear_generated(layout: WorldLayout) -> None:
    for name in _GENERATED:
        shutil.rmtree(layout.root / name, ignore_errors=True)
    for name in _GENERATED_FILES:
        (layout.root / name).unlink(missing_ok=True)


def build_world(root: Path, spec: WorldSpec) -> WorldInfo:
    """Lay out a fresh world in ``root`` as ``spec`` asks: world.json, host.json files,
    keys, shims."""
    from skupper_sandbox import real_hosts, real_podman
    from skupper_sandbox.router import choice

    try:
        chosen = choice.choose(spec.router)
        podman = real_podman.choose(spec.podman)
    except (ValueError, FileNotFoundError) as exc:
        raise SandboxError(str(exc)) from exc
    emulated_only = [
        f"{host}={name}"
        for host, names in spec.host_quirks.items()
        for name in names
        if name.startswith(quirks.PODMAN_RELEASE_PREFIX)
    ]
    if podman.kind == "real" and emulated_only:
        raise SandboxError(
            f"{', '.join(emulated_only)}: only the emulated podman takes another release "
            "(this machine's real podman is the release it is)"
        )

    layout = WorldLayout(root)
    layout.root.mkdir(parents=True, exist_ok=True)
    _clear_generated(layout)
    info = plan_world(layout.root, allocate_block(layout.root), spec)
    info.router, info.router_home = chosen.kind, chosen.home
    info.podman = podman.kind
    from skupper_sandbox import real_users

    try:
        users = real_hosts.make_users(layout, info)
    except (real_users.RealUserError, OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"real users: {exc}") from exc
    try:
        return _lay_out(layout, info, podman, users)
    except BaseException:
        real_hosts.remove(layout, info)
        real_hosts.remove_users(layout, info)
        raise


def _lay_out(layout: WorldLayout, info: WorldInfo, podman: Choice, users: list[str]) -> WorldInfo:
    """The host directories, keys, shims and real podman stores of a planned world."""
    from skupper_sandbox import real_hosts, real_podman, real_users, ssh

    for path in (layout.ssh_dir, layout.logs_dir, layout.bin_dir, layout.kube_dir):
        path.mkdir(parents=True, exist_ok=True)
    for host in info.hosts:
        host_dir = layout.host_dir(host.name)
        (host_dir / "home").mkdir(parents=True)
        (host_dir / "run").mkdir(mode=0o700)
        hostenv.write_host_info(
            hostenv.HostInfo(
                name=host.name,
                address=host.address,
                user=host.user,
                uid=host.uid,
                role=host.role,
                skupper_version=host.skupper_version,
                tmp_writable=host.tmp_writable,
                world_id=info.id,
                world_dir=str(layout.root),
                host_dir=str(host_dir),
                gid=host.gid,
                quirk_names=tuple(host.quirks),
                real_user=host.real_user,
            )
        )
    ssh.write_keys(info)
    from skupper_sandbox.shims import write_shims

    write_shims(layout.root, sys.executable, compiled=True)
    try:
        opened = real_hosts.give_hosts(layout, info)
    except (real_users.RealUserError, OSError) as exc:
        raise SandboxError(f"real users: {exc}") from exc
    try:
        real = real_hosts.prepare(layout, info)
    except (real_podman.RealPodmanError, real_users.RealUserError, OSError) as exc:
        raise SandboxError(f"real podman: {exc}") from exc
    print(
        f"podman: {podman.kind} ({podman.reason}); real on: {', '.join(real) or 'no host'}",
        file=sys.stderr,
    )
    if podman.kind == "real":
        for host in info.ssh_hosts:
            why = real_hosts.stays_emulated(host)
            if why:
                print(f"podman: emulated on {host.name}: {why}", file=sys.stderr)
    if users:
        print(f"real users: {', '.join(users)}", file=sys.stderr)
    if opened:
        print(f"opened for search (o+x): {', '.join(map(str, opened))}", file=sys.stderr)
    layout.save(info)
    return info


def _log_tail(layout: WorldLayout, lines: int = 30) -> str:
    try:
        text = layout.world_log.read_text(errors="replace")
    except FileNotFoundError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def up(root: Path, spec: WorldSpec) -> WorldInfo:
    """Build the world ``spec`` asks for in ``root``, start its daemon and return once it
    is ready."""
    layout = WorldLayout(root)
    if daemon_pid(layout) is not None:
        raise SandboxError(f"a sandbox is already running in {layout.root}; run sandbox down first")
    if layout.world_json.exists():
        stop_world(layout)  # leftovers of a world whose daemon died
    if spec.sshd == "openssh" and not Path("/usr/sbin/sshd").exists():
        raise SandboxError("--sshd openssh needs /usr/sbin/sshd (apt-get install openssh-server)")
    try:
        info = build_world(root, spec)
    except ValueError as exc:
        raise SandboxError(str(exc)) from exc
    env = dict(os.environ)
    env[hostenv.WORLD_ID_VAR] = info.id
    with layout.world_log.open("ab") as out:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "skupper_sandbox.world", "--dir", str(layout.root)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    layout.daemon_pid_file.write_text(f"{daemon.pid}\n")
    timeout = CUSTOM_MODEL_READY_TIMEOUT if spec.model_server_command else READY_TIMEOUT
    deadline = time.monotonic() + timeout
    while not layout.ready.exists():
        if daemon.poll() is not None:
            stop_world(layout)
            raise SandboxError(
                f"the sandbox failed to start (exit {daemon.returncode}); "
                f"log {layout.world_log}:\n{_log_tail(layout)}"
            )
        if time.monotonic() > deadline:
            stop_world(layout)
            raise SandboxError(
                f"the sandbox was not ready within {timeout:g}s; "
                f"log {layout.world_log}:\n{_log_tail(layout)}"
            )
        time.sleep(0.05)
    return layout.load()


# --- down -----------------------------------------------------------------------------


def stop_world(layout: WorldLayout) -> list[int]:
    """Stop the daemon, kill every process of the world, remove its fault chain.

    Idempotent. Returns the pids that were still alive afterwards (none, normally).
    """
    try:
        info = layout.load()
    except FileNotFoundError:
        return []
    pid = daemon_pid(layout)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if _wait_gone([pid], DAEMON_STOP_TIMEOUT):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_gone([pid], 2.0)
    from skupper_sandbox import real_hosts

    # the real podman's containers and stores, by podman itself (its sweep below: any
    # process left, conmon's too, carries the world's id; the users' last, the rootless
    # pause process, goes with its user)
    real_hosts.remove(layout, info)
    # Monitors may start processes while we kill, so sweep until nothing carries the id.
    deadline = time.monotonic() + SWEEP_TIMEOUT
    left = world_processes(info.id)
    while left and time.monotonic() < deadline:
        for victim in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
        _wait_gone(left, 1.0)
        left = world_processes(info.id)
    from skupper_sandbox import real_users

    try:
        closed = real_hosts.remove_users(layout, info)
    except (real_users.RealUserError, OSError, subprocess.SubprocessError) as exc:
        print(f"sandbox down: {exc}", file=sys.stderr)
    else:
        if closed:
            print(f"closed for search (o-x): {', '.join(map(str, closed))}", file=sys.stderr)
    with contextlib.suppress(faults.FaultError):
        faults.remove_chain(info.id)
    layout.ready.unlink(missing_ok=True)
    layout.daemon_pid_file.unlink(missing_ok=True)
    return left


# --- status ---------------------------------------------------------------------------


def _containers(home: Path) -> tuple[list[str], int]:
    """The names of the host's running containers, and how many it has in all."""
    from skupper_sandbox import real_hosts
    from skupper_sandbox.emulated.podman import containers

    real = real_hosts.container_names(home.parent)
    if real is not None:
        return real
    every = containers.list_all(home)
    return [c.name for c in every if containers.running(c)], len(every)


def world_status(layout: WorldLayout) -> dict[str, object]:
    """What runs in the world now: per host reachability, manager, containers, fault."""
    info = layout.load()
    running = daemon_pid(layout) is not None
    managers = set()
    if running:
        for pid in world_processes(info.id):
            if "sandbox.emulated.systemd" in _cmdline(pid):
                managers.add(_environ(pid).get(hostenv.HOST_VAR, ""))
    network = faults.network_faults(info.id) if running else {}
    hosts = []
    for host in info.ssh_hosts:
        host_dir = layout.host_dir(host.name)
        running_containers, total = _containers(host_dir / "home")
        slow = faults.slow_delay(host_dir)
        kinds = [network.get(host.name), f"slow {slow:g}s" if slow else None]
        fault = ", ".join(k for k in kinds if k) or None
        hosts.append(
            {
                "name": host.name,
                "role": host.role,
                "address": host.address,
                "ssh_port": host.ssh_port,
                "ssh_reachable": running
                and port_open(host.address, host.ssh_port, greeting=b"SSH-"),
                "user_manager": str(host_dir) in managers,
                "containers_running": len(running_containers),
                "running": running_containers,
                "containers_total": total,
                "fault": fault,
            }
        )
    kube = None
    if info.kube is not None:
        kube = {
            "address": info.kube.address,
            "port": info.kube.port,
            "kubeconfig": info.kube.kubeconfig,
            "reachable": running and port_open(info.kube.address, info.kube.port),
            "fault": faults.kube_fault(layout.kube_fault),
        }
    return {
        "id": info.id,
        "dir": info.dir,
        "running": running,
        "sshd": info.sshd,
        "topology": str(layout.topology_env),
        "hosts": hosts,
        "kube": kube,
    }


def _yes(value: object) -> str:
    return "yes" if value else "no"


def format_status(status: dict[str, object]) -> str:
    """The status as a human table."""
    state = "running" if status["running"] else "stopped"
    lines = [f"sandbox {status['id']} in {status['dir']}: {state} (sshd: {status['sshd']})", ""]
    header = ("HOST", "ADDRESS", "SSH", "MANAGER", "CONTAINERS", "FAULT")
    rows = [header]
    hosts = status["hosts"]
    assert isinstance(hosts, list)
    for h in hosts:
        counts = f"{h['containers_running']}/{h['containers_total']} running"
        rows.append(
            (
                h["name"],
                f"{h['address']}:{h['ssh_port']}",
                _yes(h["ssh_reachable"]),
                _yes(h["user_manager"]),
                counts,
                h["fault"] or "-",
            )
        )
    kube = status["kube"]
    if isinstance(kube, dict):
        rows.append(
            (
                "crc (kube API)",
                f"{kube['address']}:{kube['port']}",
                _yes(kube["reachable"]),
                "-",
                "-",
                kube["fault"] or "-",
            )
        )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    lines += [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return "\n".join(lines)


# --- faults ---------------------------------------------------------------------------


def apply_fault(layout: WorldLayout, host: str, kind: str, args: list[str]) -> str:
    """Apply (or with ``restore`` undo) a fault on ``host``; returns what was done."""
    info = layout.load()
    if daemon_pid(layout) is None:
        raise SandboxError(f"no sandbox is running in {layout.root}; run sandbox up first")
    if host == "crc":
        if info.kube is None:
            raise SandboxError(
                "this sandbox has no Kubernetes site (it was started with --no-kubernetes)"
            )
        modes = {"unauthenticated": "unauthenticated", "down": "down", "restore": None}
        if kind not in modes or args:
            raise SandboxError("usage: sandbox fault crc unauthenticated|down|restore")
        faults.set_kube_fault(layout.kube_fault, modes[kind], info.kube.pid)  # type: ignore[arg-type]
        return f"crc: {kind}"
    try:
        entry = info.host(host)
    except KeyError as exc:
        raise SandboxError(str(exc.args[0])) from exc
    host_dir = layout.host_dir(host)
    if kind in ("down", "blackhole") and not args:
        faults.set_network(info.id, host, entry.address, kind)  # type: ignore[arg-type]
    elif kind == "slow" and len(args) == 1:
        try:
            seconds = float(args[0])
        except ValueError as exc:
            raise SandboxError(f"slow needs a number of seconds, not {args[0]!r}") from exc
        faults.set_slow(host_dir, seconds)
    elif kind == "firewall" and len(args) == 1 and args[0].isdigit():
        faults.set_firewall(info.id, host, entry.address, int(args[0]))
    elif kind == "reboot" and not args:
        return reboot.reboot(host_dir)
    elif kind == "kill-router" and not args:
        killed = faults.kill_routers(host_dir / "home")
        return f"{host}: killed {', '.join(killed) or 'no running router'}"
    elif kind == "cert-ends" and len(args) == 2:
        return _cert_ends(host, host_dir, args)
    elif kind == "restore" and not args:
        faults.clear_network(info.id, host)
        faults.clear_slow(host_dir)
    else:
        raise SandboxError(
            f"usage: sandbox fault {host} down|blackhole|firewall PORT|slow SECONDS|kill-router"
            "|cert-ends DAYS NAME|reboot|restore"
        )
    return f"{host}: {kind}{' ' + ' '.join(args) if args else ''}"


def _cert_ends(host: str, host_dir: Path, args: list[str]) -> str:
    """``fault HOST cert-ends DAYS NAME``: the certificate NAME (a directory of the site's
    runtime/issuers or runtime/certs) ends DAYS days from now, as one does five years after
    setup."""
    try:
        days = float(args[0])
    except ValueError as exc:
        raise SandboxError(f"cert-ends needs a number of days, not {args[0]!r}") from exc
    name = args[1]
    changed = faults.age_certificate(host_dir, name, days)
    if not changed:
        raise SandboxError(f"{host} has no certificate {name!r} (is its site set up?)")
    return f"{host}: {name} ends in {args[0]} days ({', '.join(changed)})"


def upgrade(layout: WorldLayout, host: str, release: str) -> str:
    """``sandbox upgrade HOST RELEASE``: what a package upgrade does on a real host. The host's
    skupper CLI is RELEASE from now on (host.json, world.json); on a real-podman host the
    release's images are imported into its store, as after a pull (the emulated podman has
    every release's). The running router and controller keep the images they run and the
    units stay as written: Skupper has no in-place upgrade of a system site (skupper #2390)."""
    from skupper_sandbox import real_hosts, real_podman

    if release not in ROUTER_VERSIONS:
        raise SandboxError(f"unknown release {release!r} (known: {', '.join(ROUTER_VERSIONS)})")
    info = layout.load()
    if daemon_pid(layout) is None:
        raise SandboxError(f"no sandbox is running in {layout.root}; run sandbox up first")
    try:
        entry = info.host(host)
    except KeyError as exc:
        raise SandboxError(str(exc.args[0])) from exc
    if entry.role == "kubernetes":
        raise SandboxError("upgrade takes an SSH host (the cluster's release is its own)")
    was = entry.skupper_version
    entry.skupper_version = release
    layout.save(info)
    host_dir = layout.host_dir(host)
    known = hostenv.load_host_info(host_dir)
    hostenv.write_host_info(dataclasses.replace(known, skupper_version=release))
    if real_podman.is_real(host_dir):
        real_hosts.upgrade_images(layout, info, entry, sys.executable)
    return f"{host}: skupper {was} -> {release} (its running site untouched)"


def host_verb(layout: WorldLayout, args: argparse.Namespace) -> str:
    """``reboot HOST`` or ``linger HOST yes|no`` (as root runs loginctl there)."""
    if daemon_pid(layout) is None:
        raise SandboxError(f"no sandbox is running in {layout.root}; run sandbox up first")
    info = layout.load()
    try:
        entry = info.host(args.host)
    except KeyError as exc:
        raise SandboxError(str(exc.args[0])) from exc
    if entry.role == "kubernetes":
        raise SandboxError(f"{args.host} is the Kubernetes site, not an SSH host")
    host_dir = layout.host_dir(args.host)
    if args.verb == "reboot":
        return reboot.reboot(host_dir)
    hostenv.set_linger(hostenv.load_host_info(host_dir), args.setting == "yes")
    return f"{args.host}: Linger={args.setting}"


# --- command line ---------------------------------------------------------------------


def parse_skupper_versions(items: list[str]) -> dict[str, str]:
    """``HOST=VERSION`` items -> {host: version}; unknown releases are refused."""
    versions: dict[str, str] = {}
    for item in items:
        host, sep, version = item.partition("=")
        if not sep or not host or not version:
            raise SandboxError(f"--skupper-version {item!r}: expected HOST=VERSION")
        if version not in ROUTER_VERSIONS:
            raise SandboxError(
                f"--skupper-version {item!r}: unknown release (known: {', '.join(ROUTER_VERSIONS)})"
            )
        versions[host] = version
    return versions


def _namespace(value: str) -> str:
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", value):
        raise SandboxError(f"--namespace {value!r}: expected a DNS-1123 label")
    return value


def _router_line(info: WorldInfo) -> str:
    from skupper_sandbox.router import choice

    return choice.recorded(info.router, info.router_home).describe()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skupper-sandbox", description="Run a simulated Skupper V2 network locally."
    )
    verbs = parser.add_subparsers(dest="verb", required=True)

    def verb(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="world directory")
        return sub

    up_p = verb("up", "start a sandbox world and leave it running in the background")
    up_p.add_argument("--providers", type=int, default=2, help="number of provider hosts")
    up_p.add_argument("--sshd", choices=("asyncssh", "openssh"), default="asyncssh")
    up_p.add_argument("--no-kubernetes", action="store_true", help="no crc site")
    up_p.add_argument(
        "--model-server", metavar="COMMAND", help="run COMMAND as each provider's model"
    )
    up_p.add_argument(
        "--model-server-volume",
        metavar="DIR",
        action="append",
        default=[],
        help="a directory the model containers of real-podman hosts see at its own path "
        "(repeatable; a key file COMMAND reads, say)",
    )
    up_p.add_argument(
        "--skupper-version",
        metavar="HOST=VERSION",
        action="append",
        default=[],
        help="the Skupper release HOST's skupper CLI emulates (repeatable; default "
        f"{DEFAULT_SKUPPER_VERSION}; known: {', '.join(ROUTER_VERSIONS)})",
    )
    up_p.add_argument(
        "--namespace",
        default="default",
        help="the Skupper namespace of every podman site in topology.env (default: default)",
    )
    up_p.add_argument(
        "--root-host",
        metavar="NAME",
        action="append",
        default=[],
        help="log in to host NAME as root (uid 0: Skupper's rootful layout); repeatable. "
        "Other hosts log in as their non-root user",
    )
    up_p.add_argument(
        "--host-quirk",
        metavar="HOST=QUIRK",
        action="append",
        default=[],
        help="give SSH host HOST a quirk of real hosts (repeatable). " + quirks.help_text(),
    )
    up_p.add_argument(
        "--embeddings",
        metavar="HOST",
        action="append",
        default=[],
        help="provider HOST serves two models side by side: its chat server and an "
        "embeddings server (a second container), two endpoints in topology.env; repeatable",
    )
    up_p.add_argument(
        "--router",
        choices=("auto", "real", "imitation"),
        default=None,
        help="a real skrouterd (the one installed where $SKMCP_SKUPPER_ROUTER points) or the "
        "Python imitation; auto: the real one when it is set and runs",
    )
    up_p.add_argument(
        "--podman",
        choices=("real", "emulated", "auto"),
        default=None,
        help="this machine's podman (one store per host) on the root hosts, or the emulated "
        "one everywhere; auto (the default, or $SKMCP_SANDBOX_PODMAN): real when a probe "
        "container runs here, saying which it chose",
    )
    up_p.add_argument(
        "--model-engine",
        metavar="HOST=ENGINE",
        action="append",
        default=[],
        help="the engine provider HOST's model server answers as (repeatable; one of "
        f"{', '.join(engines.ENGINES)}; default openai)",
    )
    model_p = verb(
        "model",
        "move a provider's model server between states: load SECONDS (counted from its "
        "start; a load in progress ends when given a shorter one), sleep, wake, "
        "queue RUNNING WAITING, kv FRACTION, vram FRACTION, release old|new, restart (its "
        "container, over SSH: the model loads again)",
    )
    model_p.add_argument("host", help="provider host name")
    model_p.add_argument("what", help="load|sleep|wake|queue|kv|vram|release|restart")
    model_p.add_argument("args", nargs="*", help="its values")
    status_p = verb("status", "show the hosts of the world and what runs on them")
    status_p.add_argument("--json", action="store_true", help="print JSON")
    fault_p = verb("fault", "inject or undo a fault on a host")
    fault_p.add_argument("host", help="host name, or crc")
    fault_p.add_argument(
        "kind",
        help="down|blackhole|slow|kill-router|cert-ends|reboot|restore (crc: unauthenticated|"
        "down|restore)",
    )
    fault_p.add_argument("args", nargs="*", help="SECONDS for slow; DAYS CERTIFICATE for cert-ends")
    upgrade_p = verb(
        "upgrade",
        "a package upgrade of a host's Skupper: the new CLI and its release's images there, "
        "nothing running touched",
    )
    upgrade_p.add_argument("host", help="an SSH host of the world")
    upgrade_p.add_argument("release", help="the Skupper release, e.g. 2.2.1")
    reboot_p = verb(
        "reboot",
        "reboot a host: every process of it ends, its runtime directories are emptied, its "
        "boot id changes; then only what a real host starts runs (the user's enabled units "
        "when it lingers, nothing otherwise)",
    )
    reboot_p.add_argument("host", help="an SSH host of the world")
    linger_p = verb(
        "linger",
        "what `loginctl enable-linger|disable-linger USER` does as root on HOST: the user "
        "manager comes up (and starts the enabled units) or stays down after the next reboot",
    )
    linger_p.add_argument("host", help="an SSH host of the world")
    linger_p.add_argument("setting", choices=("yes", "no"))
    verb("down", "stop everything the world started")
    return parser


def _world_spec(args: argparse.Namespace) -> WorldSpec:
    """The world ``sandbox up``'s options ask for (``up_options`` writes them)."""
    return WorldSpec(
        providers=args.providers,
        sshd=args.sshd,
        kubernetes=not args.no_kubernetes,
        model_server_command=args.model_server,
        model_server_volumes=tuple(args.model_server_volume),
        skupper_versions=parse_skupper_versions(args.skupper_version),
        namespace=_namespace(args.namespace),
        root_hosts=frozenset(args.root_host),
        router=args.router,
        podman=args.podman,
        host_quirks=_host_quirks(args.host_quirk),
        embeddings_hosts=frozenset(args.embeddings),
        model_engines=_model_engines(args.model_engine),
    )


def _model_engines(items: list[str]) -> dict[str, str]:
    chosen: dict[str, str] = {}
    for item in items:
        host, sep, engine = item.partition("=")
        if not sep or not host:
            raise SandboxError(f"--model-engine {item!r}: expected HOST=ENGINE")
        try:
            chosen[host] = engines.check(engine)
        except engines.EngineError as exc:
            raise SandboxError(f"--model-engine {item!r}: {exc}") from exc
    return chosen


async def host_run(
    layout: WorldLayout,
    info: WorldInfo,
    host: str,
    command: str,
    *,
    input: str | None = None,
    timeout: float = HOST_COMMAND_TIMEOUT,
) -> tuple[int, str, str]:
    """Run ``command`` on the world's ``host`` over SSH, as the topology's user does:
    (exit status, stdout, stderr)."""
    import asyncio

    import asyncssh  # only the verbs that reach a host need it

    entry = next((h for h in info.hosts if h.name == host), None)
    if entry is None:
        raise SandboxError(f"no host {host!r} (hosts: {', '.join(h.name for h in info.hosts)})")
    async with asyncssh.connect(
        entry.address,
        port=entry.ssh_port,
        username=ssh_user(info, entry),
        client_keys=[str(layout.client_key)],
        known_hosts=str(layout.known_hosts),
        connect_timeout=5,
    ) as conn:
        result = await asyncio.wait_for(conn.run(command, input=input), timeout)
    return (
        result.exit_status if result.exit_status is not None else 255,
        str(result.stdout or ""),
        str(result.stderr or ""),
    )


def restart_model(layout: WorldLayout, host: str) -> str:
    """``sandbox model HOST restart``: what the hosted-model-ctl skill does to restart a
    provider's model (its container restarts, and its engine loads the model again)."""
    import asyncio

    command = f"podman restart {MODEL_CONTAINER}"
    rc, out, err = asyncio.run(host_run(layout, layout.load(), host, command))
    if rc != 0:
        raise SandboxError(f"{command} on {host} exited {rc}: {(err or out).strip()}")
    return f"{host}: {MODEL_CONTAINER} restarted"


def model_control(layout: WorldLayout, host: str, what: str, values: list[str]) -> str:
    """``sandbox model HOST WHAT ARGS``: the provider's control file, changed."""
    names = {h.name for h in layout.load().providers}
    if host not in names:
        raise SandboxError(f"no provider {host!r} (providers: {', '.join(sorted(names))})")
    fields = {
        "load": ("load_seconds",),
        "queue": ("running", "waiting"),
        "kv": ("kv_cache_used",),
        "vram": ("vram_share",),
        "release": ("vllm_release",),
    }
    if what in ("sleep", "wake"):
        change: dict[str, object] = {"sleeping": what == "sleep"}
    elif what in fields and len(values) == len(fields[what]):
        change = {
            name: value if name == "vllm_release" else json.loads(value)
            for name, value in zip(fields[what], values, strict=True)
        }
    else:
        raise SandboxError(f"model {what} {' '.join(values)}: see sandbox model --help")
    try:
        control = engines.write_control(engines.control_path(layout.host_dir(host)), **change)
    except (engines.EngineError, ValueError) as exc:
        raise SandboxError(str(exc)) from exc
    return f"{host}: {control.to_json()}"


def _host_quirks(items: list[str]) -> dict[str, tuple[str, ...]]:
    try:
        return quirks.parse(items)
    except quirks.QuirkError as exc:
        raise SandboxError(str(exc)) from exc


def up_options(spec: WorldSpec) -> list[str]:
    """The ``sandbox up`` options that ask for ``spec`` (``_world_spec`` reads them back)."""
    options = ["--providers", str(spec.providers), "--sshd", spec.sshd]
    for host, version in spec.skupper_versions.items():
        options += ["--skupper-version", f"{host}={version}"]
    if spec.namespace != WorldSpec.namespace:
        options += ["--namespace", spec.namespace]
    if not spec.kubernetes:
        options.append("--no-kubernetes")
    if spec.model_server_command:
        options += ["--model-server", spec.model_server_command]
    for volume in spec.model_server_volumes:
        options += ["--model-server-volume", volume]
    for name in sorted(spec.root_hosts):
        options += ["--root-host", name]
    if spec.router:
        options += ["--router", spec.router]
    if spec.podman:
        options += ["--podman", spec.podman]
    options += quirks.options(spec.host_quirks)
    for name in sorted(spec.embeddings_hosts):
        options += ["--embeddings", name]
    for host, engine in spec.model_engines.items():
        options += ["--model-engine", f"{host}={engine}"]
    return options


def main(argv: list[str] | None = None) -> int:
    """Run ``sandbox up|status|fault|reboot|linger|down`` (``argv``: default the command
    line); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    library_warnings_to_log()
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    layout = WorldLayout(args.dir)
    try:
        if args.verb == "up":
            started = time.monotonic()
            info = up(args.dir, _world_spec(args))
            took = time.monotonic() - started
            print(
                f"sandbox {info.id} up in {took:.1f}s: {len(info.providers)} providers, "
                f"sshd {info.sshd}, addresses {info.block}.0/24"
            )
            print(f"  {_router_line(info)}")
            for host in info.hosts:
                who = f"  {host.user} (uid {host.uid})" if host.role != "kubernetes" else ""
                print(f"  {host.name:<14} {host.address}{who}")
            print(layout.topology_env)
        elif args.verb == "down":
            if not layout.world_json.exists():
                print(f"no sandbox in {layout.root}")
                return 0
            left = stop_world(layout)
            if left:
                print(f"processes still alive: {left}", file=sys.stderr)
                return 1
            print(f"sandbox in {layout.root} stopped")
        elif args.verb == "status":
            if not layout.world_json.exists():
                raise SandboxError(f"no sandbox in {layout.root}; run sandbox up first")
            status = world_status(layout)
            print(json.dumps(status, indent=2) if args.json else format_status(status))
            return 0 if status["running"] else 3
        elif args.verb == "fault":
            if not layout.world_json.exists():
                raise SandboxError(f"no sandbox in {layout.root}; run sandbox up first")
            print(apply_fault(layout, args.host, args.kind, args.args))
        elif args.verb == "upgrade":
            if not layout.world_json.exists():
                raise SandboxError(f"no sandbox in {layout.root}; run sandbox up first")
            print(upgrade(layout, args.host, args.release))
        elif args.verb in ("reboot", "linger"):
            print(host_verb(layout, args))
        elif args.verb == "model":
            if not layout.world_json.exists():
                raise SandboxError(f"no sandbox in {layout.root}; run sandbox up first")
            if args.what == "restart" and not args.args:
                print(restart_model(layout, args.host))
            else:
                print(model_control(layout, args.host, args.what, args.args))
    except (SandboxError, faults.FaultError, reboot.RebootError) as exc:
        print(f"sandbox: {exc}", file=sys.stderr)
        return 1 if args.verb in ("up", "down") else 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
