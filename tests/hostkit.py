"""A throwaway sandbox host for tests: host.json, shims and (optionally) its user manager.

    kit = make_host(tmp_path, address="127.201.0.2")
    with kit.manager():
        kit.sh("systemctl --user start foo.service")
    kit.cleanup()   # kills every process that carries the kit's world id

Commands run as a user on the host would run them: the host environment plus
`XDG_RUNTIME_DIR=/run/user/<uid>`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from polling import wait_for
from skupper_sandbox import hostenv
from skupper_sandbox.layout import WorldLayout
from skupper_sandbox.router import choice
from skupper_sandbox.shims import write_shims


def router_kinds() -> list[Any]:
    """Both routers, as test parameters: a real skrouterd where ``$SKMCP_SKUPPER_ROUTER``
    points at an installed one that runs (else skipped, with the reason, which names the
    variable), and the imitation, which runs everywhere."""
    real = choice.choose("auto")
    skip = pytest.mark.skip(reason=f"the real router cannot run here: {real.reason}")
    return [pytest.param("real", marks=[] if real.kind == "real" else [skip]), "imitation"]


@dataclass
class HostKit:
    """One emulated host inside its own throwaway world directory."""

    world_dir: Path
    info: hostenv.HostInfo

    @property
    def host_dir(self) -> Path:
        return Path(self.info.host_dir)

    @property
    def home(self) -> Path:
        return self.info.home

    @property
    def unit_dir(self) -> Path:
        if self.info.is_root:
            return hostenv.system_path(self.info, "/etc/systemd/system")
        return self.home / ".config" / "systemd" / "user"

    def env(self, *, runtime: bool = True) -> dict[str, str]:
        """The environment of a login on the host (with XDG_RUNTIME_DIR unless told not)."""
        env = hostenv.host_env(self.host_dir)
        if runtime and not self.info.is_root:
            env["XDG_RUNTIME_DIR"] = f"/run/user/{self.info.uid}"
        return env

    def sh(
        self, script: str, *, timeout: float = 30, runtime: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a shell command on the host; its output is captured as text."""
        return subprocess.run(
            ["/bin/sh", "-c", script],
            env=self.env(runtime=runtime),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def show(self, unit: str, *props: str) -> dict[str, str]:
        """``systemctl --user show UNIT -p PROPS``: each property's value, by name."""
        out = self.sh(f"systemctl --user show {unit} -p {','.join(props)}").stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def skupper(
        self, *args: str, stdin: str | None = None, platform: bool = True, timeout: float = 90
    ) -> subprocess.CompletedProcess[str]:
        """Run the emulated skupper CLI on the host, as the product runs it: with
        ``SKUPPER_PLATFORM=podman`` in the environment unless ``platform`` is false."""
        env = self.env()
        if platform:
            env["SKUPPER_PLATFORM"] = "podman"
        command = [sys.executable, "-m", "skupper_sandbox.emulated.skupper", *args]
        return subprocess.run(
            command, env=env, input=stdin, capture_output=True, text=True, timeout=timeout
        )

    def wait_until_started(self, unit: str, deadline: float = 30.0) -> None:
        """Wait until a Type=simple unit's start command has ended (its MainPID is 0).

        ``systemctl start`` of such a unit returns once the command is forked. A stop
        sent before it ends runs ExecStop while the start still runs, and the start can
        then undo the stop: with the controller's units, on real systemd as here."""

        def main_pid() -> str:
            shown = self.sh(f"systemctl --user show -p MainPID --value {unit}")
            return shown.stdout.strip()

        wait_for(lambda: main_pid() == "0", timeout=deadline, what=f"{unit}'s start to end")

    def write_unit(self, name: str, text: str) -> Path:
        self.unit_dir.mkdir(parents=True, exist_ok=True)
        path = self.unit_dir / name
        path.write_text(text)
        return path

    @contextlib.contextmanager
    def manager(self, deadline: float = 10.0) -> Iterator[subprocess.Popen[bytes]]:
        """Run the host's user manager for the duration of the block."""
        log = open(self.world_dir / f"systemd-{self.info.name}.log", "ab")  # noqa: SIM115
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skupper_sandbox.emulated.systemd",
                "--host-dir",
                str(self.host_dir),
            ],
            env=hostenv.host_env(self.host_dir),
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            bus = hostenv.manager_bus(self.info)
            wait_for(
                lambda: bus.exists() or proc.poll() is not None,
                timeout=deadline,
                what="the user manager to open its bus",
            )
            if proc.poll() is not None:
                raise RuntimeError(f"the user manager exited with {proc.returncode}")
            yield proc
        finally:
            stop_process(proc)
            log.close()

    def cleanup(self) -> None:
        """Kill every process that runs on this host's world (containers, monitors, units)."""
        kill_world(self.info.world_id)


def stop_process(process: subprocess.Popen[bytes], grace: float = 10) -> None:
    """SIGTERM ``process`` if it still runs; SIGKILL it after ``grace`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_model_server(
    host_dir: str | Path,
    host: str,
    port: int,
    model_id: str,
    options: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """The sandbox's model server on a host (its environment), listening on ``host:port``,
    with ``options`` (``--api-key KEY``, ``--no-health``, ``--engine E``) and
    ``extra_env`` (its control file, ``SKMCP_MODEL_CONTROL``)."""
    env = {
        **(extra_env or {}),
        **hostenv.host_env(host_dir),
        "HOST": host,
        "PORT": str(port),
        "MODEL_ID": model_id,
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "skupper_sandbox.model_server", *options],
        env=env,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


def world_pids(world_id: str) -> list[int]:
    """Processes whose environment carries this world id."""
    marker = f"{hostenv.WORLD_ID_VAR}={world_id}".encode()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_world(world_id: str) -> None:
    for pid in world_pids(world_id):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def write_host(
    world_dir: Path,
    name: str,
    address: str,
    *,
    user: str = "root",
    uid: int = 0,
    role: str = "provider",
    skupper_version: str = "2.1.1",
    tmp_writable: bool = True,
    world_id: str | None = None,
    quirks: tuple[str, ...] = (),
) -> hostenv.HostInfo:
    """Host ``name`` of the world in ``world_dir``: its home, and host.json (and the ident
    file) as a world writes them. A world id of its own unless ``world_id`` is given."""
    host_dir = WorldLayout(world_dir).host_dir(name)
    (host_dir / "home").mkdir(parents=True, exist_ok=True)
    info = hostenv.HostInfo(
        name=name,
        address=address,
        user=user,
        uid=uid,
        role=role,
        skupper_version=skupper_version,
        tmp_writable=tmp_writable,
        world_id=world_id or f"test-{secrets.token_hex(6)}",
        world_dir=str(world_dir),
        host_dir=str(host_dir),
        quirk_names=quirks,
    )
    hostenv.write_host_info(info)
    return info


def make_host(
    root: Path,
    name: str = "h1",
    address: str = "127.201.0.2",
    *,
    tmp_writable: bool = True,
    role: str = "provider",
    skupper_version: str = "2.1.1",
    as_root: bool = False,
    compiled: bool = False,
    quirks: tuple[str, ...] = (),
) -> HostKit:
    """Create `root/world/hosts/<name>` with host.json, home, run dir and the world's shims
    (the compiled command client when ``compiled``: it needs a running command server to
    be fast, and runs the emulation itself without one)."""
    world_dir = root / "world"
    info = write_host(
        world_dir,
        name,
        address,
        user="root" if as_root else "cloud-user",
        uid=0 if as_root else 1000,
        role=role,
        skupper_version=skupper_version,
        tmp_writable=tmp_writable,
        quirks=quirks,
    )
    info.run_dir.mkdir(parents=True, exist_ok=True)
    write_shims(world_dir, sys.executable, compiled=compiled)
    return HostKit(world_dir=world_dir, info=info)


@contextlib.contextmanager
def running_host(root: Path, *args: Any, **kwargs: Any) -> Iterator[HostKit]:
    """``make_host(root, ...)`` for the duration of the block, then ``cleanup``."""
    kit = make_host(root, *args, **kwargs)
    try:
        yield kit
    finally:
        kit.cleanup()


def hub_resources(site: str, address: str, ports: tuple[int, int]) -> str:
    """A hub's input for ``skupper system apply``: its Site; its RouterAccess on ``ports``
    (inter-router, edge), named ``address`` and ``<site>.example.com`` in its certificate;
    and a Connector for the model API on port 9000."""
    v2 = "skupper.io/v2alpha1"
    access = f"{site}-public"
    roles = [{"name": "inter-router", "port": ports[0]}, {"name": "edge", "port": ports[1]}]
    names = [address, f"{site}.example.com"]
    api = {"routingKey": "model-api", "host": "127.0.0.1", "port": 9000}
    documents = [
        {"apiVersion": v2, "kind": "Site", "metadata": {"name": site}},
        {
            "apiVersion": v2,
            "kind": "RouterAccess",
            "metadata": {"name": access},
            "spec": {"roles": roles, "tlsCredentials": access, "subjectAlternativeNames": names},
        },
        {"apiVersion": v2, "kind": "Connector", "metadata": {"name": "model-api"}, "spec": api},
    ]
    return yaml.safe_dump_all(documents, sort_keys=False)
