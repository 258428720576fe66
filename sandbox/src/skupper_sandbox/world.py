"""The world daemon: ``python -m skupper_sandbox.world --dir DIR``.

``sandbox up`` lays out the world's directory (world.json with the plan, keys, host.json
files, shims) and starts this daemon detached. The daemon starts, concurrently, one SSH
server per host, one user manager per host (restarted if it dies), the Kubernetes API,
and the model server container on every provider; it waits for each to answer, rewrites
world.json with what runs, writes topology.env and then ``DIR/ready``. On SIGTERM it
stops everything it started and exits (``sandbox down`` sweeps up the rest).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skupper_sandbox import engines, hostenv, real_podman, real_users
from skupper_sandbox.commands.server import socket_name
from skupper_sandbox.layout import (
    BUILTIN_MODEL_IMAGE,
    CUSTOM_MODEL_IMAGE,
    EMBED_CONTAINER,
    EMBED_MODEL_ID,
    MODEL_CONTAINER,
    HostEntry,
    WorldInfo,
    WorldLayout,
    render_topology_env,
)
from skupper_sandbox.netprobe import port_open_async
from skupper_sandbox.quiet import library_warnings_to_log
from skupper_sandbox.shims import COMMAND_CLIENT

if TYPE_CHECKING:
    import asyncssh

log = logging.getLogger("skupper_sandbox.world")

SYSTEMD_MODULE = "skupper_sandbox.emulated.systemd"
PODMAN_MODULE = "skupper_sandbox.emulated.podman"
KUBE_MODULE = "skupper_sandbox.kube"
COMMANDS_MODULE = "skupper_sandbox.commands.server"
START_TIMEOUT = 25.0
CUSTOM_MODEL_TIMEOUT = 600.0
STOP_GRACE = 5.0
RESTART_DELAY = 0.5


async def wait_until(
    check: Callable[[], Awaitable[bool]], what: str, timeout: float, interval: float = 0.05
) -> None:
    """Poll an async ``check()`` until it is true; ``TimeoutError`` names ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        if await check():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not become ready within {timeout:g}s")
        await asyncio.sleep(interval)


async def _abstract_socket_open(name: str) -> bool:
    try:
        _, writer = await asyncio.open_unix_connection("\0" + name)
    except OSError:
        return False
    writer.close()
    return True


async def http_status(address: str, port: int, path: str) -> int | None:
    """The status ``GET path`` on address:port answers, or None when nothing answers HTTP."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address, port), 1.0)
    except (OSError, TimeoutError):
        return None
    try:
        writer.write(f"GET {path} HTTP/1.0\r\nHost: {address}:{port}\r\n\r\n".encode())
        await writer.drain()
        status = (await asyncio.wait_for(reader.readline(), 2.0)).split()
        if len(status) < 2 or not status[0].startswith(b"HTTP/") or not status[1].isdigit():
            return None
        return int(status[1])
    except (OSError, TimeoutError, ValueError):
        return None
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


#: What ``GET /v1/models`` may answer for a model server to be up: the list, or a refusal
#: of a server that requires a key (vLLM --api-key answers 401 on every /v1 route). A 503
#: is a server still loading its model (llama.cpp's server), not one that is up.
_MODELS_UP = frozenset({200, 401, 403})


async def model_server_up(address: str, port: int) -> bool:
    """Whether a model server answers as one that is up: ``/health`` 200, else
    ``/v1/models`` with its list or a key's refusal, since many servers have no /health
    (Ollama, LM Studio) and a keyed one lists nothing without its key."""
    if await http_status(address, port, "/health") == 200:
        return True
    return await http_status(address, port, "/v1/models") in _MODELS_UP


def _exists(path: Path) -> bool:
    # A stat on a local directory is instant; the event loop does not need a thread for it.
    return path.exists()


def _raise_if_exited(home: Path, host: str, name: str = MODEL_CONTAINER) -> None:
    """Fail fast when the model container died instead of waiting out the deadline."""
    from skupper_sandbox.emulated.podman import containers

    if real_podman.is_real(home.parent):
        from skupper_sandbox import real_hosts

        for listed in real_hosts.host_containers(home.parent):
            if listed.name == name and listed.state == "exited":
                tail = real_hosts.log_tail(home.parent, name)[-400:]
                raise RuntimeError(
                    f"the model container on {host} exited with {listed.exit_code}: {tail} "
                    f"({REAL_CONTAINER_FILES})"
                )
        return
    container = containers.get(home, name)
    if container is None or container.status != "exited":
        return
    try:
        log_tail = (container.dir / "ctr.log").read_text(errors="replace").strip()[-400:]
    except OSError:
        log_tail = ""
    raise RuntimeError(
        f"the model container on {host} exited with {container.exit_code}: {log_tail}"
    )


#: What a real model container sees of this machine, said when one exits at start
REAL_CONTAINER_FILES = (
    "a real-podman host's model container sees /usr, the sandbox's Python, the world, each "
    "--model-server-volume DIR and the files --model-server's COMMAND names by absolute path"
)


def host_user(host_dir: Path) -> real_users.LoginOptions:
    """What makes a process of the host run as its real user (nothing for the others)."""
    info = hostenv.load_host_info(host_dir)
    account = real_users.lookup(info.user) if info.real_user else None
    return account.subprocess_options() if account else real_users.LoginOptions()


@dataclass
class Supervised:
    """A child process the daemon keeps running until it stops."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    cwd: Path | None = None
    restart: bool = False
    # subprocess options that make it run as a host's real user (real_users.Account)
    as_user: real_users.LoginOptions = field(default_factory=real_users.LoginOptions)
    process: asyncio.subprocess.Process | None = None
    restarts: int = 0
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    async def spawn(self) -> None:
        with self.log_path.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                **self.as_user,
            )

    async def keep_running(self, stopping: asyncio.Event) -> None:
        while True:
            assert self.process is not None
            code = await self.process.wait()
            if stopping.is_set() or not self.restart:
                return
            log.warning("%s exited with %s; restarting it", self.name, code)
            await asyncio.sleep(RESTART_DELAY)
            if stopping.is_set():
                return
            self.restarts += 1
            await self.spawn()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None


class WorldDaemon:
    """Starts and stops everything one world runs."""

    def __init__(self, layout: WorldLayout, info: WorldInfo) -> None:
        self.layout = layout
        self.info = info
        self.stopping = asyncio.Event()
        self.acceptors: list[asyncssh.SSHAcceptor] = []
        self.children: list[Supervised] = []

    def _child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env[hostenv.WORLD_ID_VAR] = self.info.id
        return env

    async def _supervise(self, child: Supervised) -> Supervised:
        await child.spawn()
        self.children.append(child)
        child.task = asyncio.create_task(child.keep_running(self.stopping))
        return child

    async def start_ssh(self, host: HostEntry) -> None:
        # imported here, after main routed a library's warnings to the log (asyncssh's
        # import warns five times)
        from skupper_sandbox import ssh

        if self.info.sshd == "asyncssh":
            acceptor = await ssh.start_asyncssh_server(
                self.layout, host.name, host.address, host.ssh_port
            )
            self.acceptors.append(acceptor)
            return
        config = ssh.write_sshd_config(self.layout, host.name, host.address, host.ssh_port)
        await self._supervise(
            Supervised(
                name=f"sshd {host.name}",
                argv=[str(ssh.SSHD), "-D", "-e", "-f", str(config)],
                env=self._child_env(),
                log_path=self.layout.log(f"sshd-{host.name}"),
                restart=True,
            )
        )
        await wait_until(
            lambda: port_open_async(host.address, host.ssh_port),
            f"sshd on {host.name}",
            START_TIMEOUT,
        )

    async def start_command_server(self) -> None:
        """The server the hosts' compiled command clients hand their commands to."""
        name = socket_name(self.info.id)
        await self._supervise(
            Supervised(
                name="command server",
                argv=[
                    sys.executable,
                    "-m",
                    COMMANDS_MODULE,
                    name,
                    str(self.layout.logs_dir / "commands.stats"),
                ],
                env=self._child_env(),
                log_path=self.layout.log("commands"),
                restart=True,
            )
        )

        async def accepting() -> bool:
            return await _abstract_socket_open(name)

        await wait_until(accepting, "the command server", START_TIMEOUT)

    async def start_user_manager(self, host: HostEntry) -> None:
        host_dir = self.layout.host_dir(host.name)
        env = hostenv.host_env(host_dir)
        await self._supervise(
            Supervised(
                name=f"user manager {host.name}",
                argv=[sys.executable, "-m", SYSTEMD_MODULE, "--host-dir", str(host_dir)],
                env=env,
                log_path=self.layout.log(f"systemd-{host.name}"),
                cwd=Path(env["HOME"]),
                restart=True,
                as_user=host_user(host_dir),
            )
        )
        info = hostenv.load_host_info(host_dir)
        if not hostenv.manager_may_run(info):
            return  # no linger and no session (no-user-session): it waits for either
        bus = hostenv.manager_bus(info)

        async def bus_ready() -> bool:
            return _exists(bus)

        await wait_until(bus_ready, f"the user manager of {host.name}", START_TIMEOUT)

    async def start_kube(self) -> None:
        kube = self.info.kube
        assert kube is not None
        host_dir = self.layout.host_dir("crc")
        env = hostenv.host_env(host_dir)
        child = await self._supervise(
            Supervised(
                name="kubernetes API",
                argv=[
                    sys.executable,
                    "-m",
                    KUBE_MODULE,
                    "--world-dir",
                    str(self.layout.root),
                    "--host-dir",
                    str(host_dir),
                    "--address",
                    kube.address,
                    "--port",
                    str(kube.port),
                ],
                env=env,
                log_path=self.layout.log("kube"),
                cwd=Path(env["HOME"]),
            )
        )
        kube.pid = child.pid
        kubeconfig = Path(kube.kubeconfig)

        async def api_ready() -> bool:
            if child.process and child.process.returncode is not None:
                raise RuntimeError(f"the Kubernetes API exited with {child.process.returncode}")
            return _exists(kubeconfig) and await port_open_async(kube.address, kube.port)

        await wait_until(api_ready, "the Kubernetes API", START_TIMEOUT)

    async def start_models(self, host: HostEntry) -> None:
        """The host's model server, and its embeddings server beside it (--embeddings)."""
        steps = [
            self.start_model(host, MODEL_CONTAINER, host.ports["model"], host.default_model_id)
        ]
        if host.embeddings:
            steps.append(
                self.start_model(
                    host, EMBED_CONTAINER, host.ports["embed"], EMBED_MODEL_ID, engines.EMBEDDINGS
                )
            )
        await asyncio.gather(*steps)

    async def start_model(
        self,
        host: HostEntry,
        container: str,
        port: int,
        model_id: str | None,
        kind: str = engines.CHAT,
    ) -> None:
        host_dir = self.layout.host_dir(host.name)
        env = hostenv.host_env(host_dir)
        image = CUSTOM_MODEL_IMAGE if self.info.model_server_command else BUILTIN_MODEL_IMAGE
        real = real_podman.is_real(host_dir)
        podman = [sys.executable, "-m", PODMAN_MODULE]
        if real:  # the wrapper: this host's own real podman
            podman = [str(self.layout.bin_dir / "podman")]
        argv = [
            *podman, "run", "-d",
            "--name", container,
            # the host's network: a real podman's default is a network namespace of the
            # container's own, where the server's port is nobody else's
            "--network", "host",
            # a real container shares the machine's network with every host of the world:
            # "all interfaces" of a host of its own is its own address here
            "-e", f"HOST={host.address if real else '0.0.0.0'}",
            "-e", f"PORT={port}",
            "-e", f"MODEL_ID={model_id}",
            "-e", f"{engines.ENGINE_VAR}={host.model_engine}",
            "-e", f"{engines.CONTROL_VAR}={engines.control_path(host_dir)}",
            "-e", f"{engines.KIND_VAR}={kind}",
        ]  # fmt: skip
        if self.info.model_server_command:
            argv += ["-e", f"SKMCP_MODEL_SERVER_COMMAND={self.info.model_server_command}"]
        if real:  # the emulation's container sees the machine's files
            for volume in self.info.model_server_volumes:
                argv += ["-v", f"{volume}:{volume}"]
            # and the files its command names (its script), read-only, as they are
            mounted = [str(self.layout.root), *self.info.model_server_volumes]
            mounted += real_podman.sandbox_trees(sys.executable)
            for path in real_podman.command_files(self.info.model_server_command):
                if not any(path.startswith(top.rstrip("/") + "/") for top in mounted):
                    argv += ["-v", f"{path}:{path}:ro"]
        argv.append(image)
        as_user = host_user(host_dir)
        if "user" in as_user:  # the runtime directory the product's commands give podman too
            env["XDG_RUNTIME_DIR"] = f"/run/user/{as_user['user']}"
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=env["HOME"],
            **as_user,
        )
        out, err = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(
                f"podman run of the model on {host.name} failed ({proc.returncode}): "
                f"{(err or out).decode(errors='replace').strip()}"
            )
        timeout = CUSTOM_MODEL_TIMEOUT if self.info.model_server_command else START_TIMEOUT
        timeout += engines.read_control(str(engines.control_path(host_dir))).load_seconds
        home = Path(env["HOME"])

        async def healthy() -> bool:
            if await model_server_up(host.address, port):
                return True
            _raise_if_exited(home, host.name, container)
            return False

        await wait_until(healthy, f"the model server on {host.name}", timeout, interval=0.1)

    async def start(self) -> None:
        """Start every part concurrently; raises if any part fails to come up."""
        started = time.monotonic()
        ssh_hosts = self.info.ssh_hosts
        if self.info.sshd == "openssh":
            from skupper_sandbox import ssh

            ssh.ensure_privsep_dir()
        if (self.layout.bin_dir / COMMAND_CLIENT).exists():
            await self.start_command_server()  # before anything runs a command
        steps = [self.start_ssh(h) for h in ssh_hosts]
        steps += [self.start_user_manager(h) for h in ssh_hosts]
        if self.info.kube is not None:
            steps.append(self.start_kube())
        steps += [self.start_models(h) for h in self.info.providers]
        await asyncio.gather(*steps)
        self.info.daemon_pid = os.getpid()
        self.layout.save(self.info)
        self.layout.topology_env.write_text(render_topology_env(self.info))
        self.layout.ready.write_text(f"{os.getpid()}\n")
        log.info("world %s ready in %.2fs", self.info.id, time.monotonic() - started)

    async def stop(self) -> None:
        """Stop every SSH server and child process this daemon started."""
        self.stopping.set()
        for acceptor in self.acceptors:
            acceptor.close()
        for child in self.children:
            if child.process and child.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.process.pid, signal.SIGTERM)
        waits = [c.process.wait() for c in self.children if c.process]
        if waits:
            _, pending = await asyncio.wait(
                [asyncio.ensure_future(w) for w in waits], timeout=STOP_GRACE
            )
            for child in self.children:
                if child.process and child.process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.process.pid, signal.SIGKILL)
            if pending:
                await asyncio.wait(pending, timeout=STOP_GRACE)
        for acceptor in self.acceptors:
            with contextlib.suppress(OSError):
                await acceptor.wait_closed()
        for child in self.children:
            if child.task:
                child.task.cancel()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopping.set)
        try:
            startup = asyncio.create_task(self.start())
            stop_wait = asyncio.create_task(self.stopping.wait())
            await asyncio.wait({startup, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            if startup.done():
                startup.result()
                await stop_wait
            else:
                startup.cancel()
                log.info("stopped before the world was ready")
            return 0
        except (Exception, asyncio.CancelledError):
            log.exception("the world failed to start")
            return 1
        finally:
            log.info("stopping world %s", self.info.id)
            self.layout.ready.unlink(missing_ok=True)
            await self.stop()
            log.info("world %s stopped", self.info.id)


def main(argv: list[str] | None = None) -> int:
    """Run the daemon of the world planned in ``--dir``'s world.json until SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m skupper_sandbox.world")
    parser.add_argument("--dir", required=True, type=Path, help="the world's directory")
    args = parser.parse_args(argv)
    library_warnings_to_log()
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    layout = WorldLayout(args.dir)
    daemon = WorldDaemon(layout, layout.load())
    return asyncio.run(daemon.run())


if __name__ == "__main__":
    sys.exit(main())
