"""The router pod's process: a real router started like the pod's ``router`` container.

At start the pod mounts the namespace's ``kubernetes.io/tls`` Secrets (and only those, as
the kube-adaptor does) into its certs directory; Secrets created later, or deleted and
created again under the same name, are not mounted until the pod is recreated.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skupper_sandbox import hostenv, lifeline
from skupper_sandbox.kube.routerconfig import CERTS_MOUNT, CONFIG_MOUNT, profile_name
from skupper_sandbox.router import choice, release

log = logging.getLogger(__name__)


def router_image(skupper_version: str) -> str:
    """The router image a Skupper release deploys (``router.release``)."""
    return f"quay.io/skupper/skupper-router:{release.router_version(skupper_version)}"


_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
#: The pod's one container, and where its output goes: the current container's, and the one
#: before the last restart (what the kubelet keeps for ``previous=true``).
CONTAINER = "router"
LOG_FILE = "router.log"
PREVIOUS_LOG_FILE = "router.previous.log"


def pod_dir(pods_dir: Path, name: str) -> Path:
    """A router pod's directory: its config, certs, /tmp and logs."""
    return pods_dir / name


_TLS_KEYS = ("ca.crt", "tls.crt", "tls.key")


def new_pod_name(prefix: str = "skupper-router") -> str:
    """A Deployment-style pod name: the prefix and five random characters."""
    return f"{prefix}-" + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))


def mount_tls_secrets(secret_objects: list[dict[str, Any]], certs_dir: Path) -> dict[str, str]:
    """Write each ``kubernetes.io/tls`` Secret as ``<name>-profile/{ca.crt,tls.crt,tls.key}``
    and return the Secrets mounted: name -> uid (a Secret re-created under the same name is
    another object, which this pod does not have). Other types are ignored."""
    mounted: dict[str, str] = {}
    for secret in secret_objects:
        if secret.get("type") != "kubernetes.io/tls":
            continue
        name = secret["metadata"]["name"]
        target = certs_dir / profile_name(name)
        target.mkdir(parents=True, exist_ok=True)
        os.chmod(target, 0o700)
        for key in _TLS_KEYS:
            value = (secret.get("data") or {}).get(key)
            if value is not None:
                path = target / key
                path.touch(mode=0o600, exist_ok=True)
                path.write_bytes(base64.b64decode(value))
        mounted[name] = str(secret["metadata"].get("uid", ""))
    return mounted


class RouterPod:
    """One router pod of a namespace: its directory, process and mounted Secrets."""

    def __init__(
        self,
        *,
        name: str,
        namespace: str,
        site_uid: str,
        pods_dir: Path,
        host_dir: Path,
        on_exit: Callable[[], None],
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.site_uid = site_uid
        self.dir = pod_dir(pods_dir, name)
        self.host_dir = host_dir
        self.skupper_version = hostenv.load_host_info(host_dir).skupper_version
        self.mounted: dict[str, str] = {}
        self.config_text: str | None = None
        self.restart_count = 0
        # Readiness, as a probe would see it: the router answered its management query.
        self.answering = False
        self.started_at: str | None = None
        self._on_exit = on_exit
        self._process: asyncio.subprocess.Process | None = None
        self._stopping = False
        self._watcher: asyncio.Task[None] | None = None

    @property
    def config_path(self) -> Path:
        return self.dir / "config" / "skrouterd.json"

    @property
    def certs_dir(self) -> Path:
        return self.dir / "certs"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def still_mounted(self, secret_objects: list[dict[str, Any]]) -> set[str]:
        """The Secrets this pod has mounted that still exist as the object it mounted."""
        uids = {s["metadata"]["name"]: s["metadata"].get("uid", "") for s in secret_objects}
        return {name for name, uid in self.mounted.items() if uids.get(name) == uid}

    def prepare(self, secret_objects: list[dict[str, Any]]) -> None:
        """Create the pod's directories and mount its TLS Secrets (once, at pod start)."""
        for sub in ("config", "certs", "tmp"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.mounted = mount_tls_secrets(secret_objects, self.certs_dir)

    def write_config(self, text: str) -> None:
        temporary = self.config_path.with_suffix(".tmp")
        temporary.write_text(text)
        os.replace(temporary, self.config_path)
        self.config_text = text

    def _environment(self) -> dict[str, str]:
        env = hostenv.host_env(self.host_dir)
        env.update(
            {
                "SSL_PROFILE_BASE_PATH": CERTS_MOUNT,
                # The container's path: the host path may itself lie under a mounted /tmp.
                "QDROUTERD_CONF": f"{CONFIG_MOUNT}/{self.config_path.name}",
                "QDROUTERD_CONF_TYPE": "json",
                "SKUPPER_SITE_ID": self.site_uid,
                "PYTHONUNBUFFERED": "1",
                # the image's tag: what the router behaves as (router.release)
                release.RELEASE_VAR: release.router_version(self.skupper_version),
                hostenv.MOUNTS_VAR: json.dumps(
                    [
                        [CONFIG_MOUNT, str(self.dir / "config")],
                        [CERTS_MOUNT, str(self.certs_dir)],
                        ["/tmp", str(self.dir / "tmp")],
                    ]
                ),
                hostenv.TMPFS_VAR: json.dumps(["/tmp"]),
            }
        )
        # a kubelet's containers outlive it; these must not outlive a killed cluster
        lifeline.tie(env)
        return env

    def _command(self) -> list[str]:
        """The world's router, as the image's launch.sh starts it."""
        world_dir = hostenv.load_host_info(self.host_dir).world_dir
        return choice.for_world(world_dir).start(sys.executable)

    async def start(self, started_at: str) -> None:
        """Start the router process (the container) of this pod. Its stdout and stderr are
        the container's log; a restart keeps the last container's log as the previous one."""
        self._stopping = False
        log_path = self.dir / LOG_FILE
        if log_path.exists():
            os.replace(log_path, self.dir / PREVIOUS_LOG_FILE)
        with log_path.open("ab") as log_file:
            self._process = await asyncio.create_subprocess_exec(
                *self._command(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                env=self._environment(),
                cwd=self.dir,
                start_new_session=True,
            )
        self.started_at = started_at
        log.info("pod %s/%s: router started (pid %s)", self.namespace, self.name, self.pid)
        self._watcher = asyncio.create_task(self._watch(self._process))

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        if not self._stopping and process is self._process:
            log.warning("pod %s/%s: router exited with %s", self.namespace, self.name, code)
        self._on_exit()

    async def restart(self, started_at: str) -> None:
        """Restart the container in place (same pod, same mounts), counting the restart."""
        await self.stop_process()
        self.restart_count += 1
        await self.start(started_at)

    async def stop_process(self, grace: float = 3.0) -> None:
        """SIGTERM the router, SIGKILL after ``grace`` seconds."""
        process = self._process
        if process is None or process.returncode is not None:
            return
        self._stopping = True
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(grace):  # not wait_for: on 3.11 it can eat a cancel
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

    async def delete(self) -> None:
        """Stop the process and remove the pod's directory."""
        await self.stop_process()
        shutil.rmtree(self.dir, ignore_errors=True)
