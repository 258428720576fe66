"""A real ``skrouterd`` behind the router seam: one a user or developer installed.

Nothing of it is in the repository. ``$SKMCP_SKUPPER_ROUTER`` names the installed
``skrouterd`` binary or its install prefix (the directory with ``sbin/skrouterd``):
``/usr`` for a distribution's package, the ``CMAKE_INSTALL_PREFIX`` of a build from source.
Beside the binary it wants its Python agent (``<prefix>/lib/skupper-router/python``) and,
for a container whose ``/tmp`` cannot be written, the default config
(``<prefix>/etc/skupper-router/skrouterd.conf``, or ``/etc/skupper-router/skrouterd.conf``).
Its libraries are the installer's business. The container's process is ``real.py``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skupper_sandbox import hostenv
from skupper_sandbox.router import amqp_management, launch, seam

PROGRAM = "skupper_sandbox.router.real"
SYSTEM_CONFIG = Path("/etc/skupper-router/skrouterd.conf")


def install_prefix(configured: str) -> Path:
    """The install prefix ``$SKMCP_SKUPPER_ROUTER`` names: itself, or for the binary
    (``<prefix>/sbin/skrouterd``) the directory two levels up."""
    path = Path(configured).expanduser().resolve()
    return path.parent.parent if path.is_file() else path


def unusable(home: Path) -> str | None:
    """Why the router installed in ``home`` cannot run here, or None when it can."""
    binary = home / "sbin" / "skrouterd"
    if not os.access(binary, os.X_OK):
        return f"no skrouterd at {binary}"
    return _version(binary)[1]


def _version(binary: Path) -> tuple[str, str | None]:
    """What ``skrouterd --version`` prints ("?" when it does not), and why it did not run."""
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "?", f"{binary} does not run: {exc}"
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        # e.g. "error while loading shared libraries: libwebsockets.so.17: ..."
        return "?", f"{binary} does not run: {detail[-1] if detail else done.returncode}"
    return done.stdout.strip() or "?", None


class AmqpManagement:
    """``seam.Management`` over AMQP management, as Skupper's controllers query skrouterd:
    one connection per router, kept between queries and opened again when it fails (the
    router restarted or was made again). A new connection costs the client about 100 ms of
    CPU (proton's connection and reply queue), a query on a kept one about 7 ms."""

    def __init__(self) -> None:
        self._open: dict[str, amqp_management.Management] = {}

    def query(
        self, key: str, address: str, port: int, cert: Path | None = None, timeout: float = 2.0
    ) -> dict[str, Any] | None:
        client = amqp_management.ClientCert(cert) if cert is not None else None
        for _ in range(2):  # a kept connection may be to a router that is gone: retry fresh
            session = self._open.get(key)
            try:
                if session is None:
                    session = amqp_management.Management(address, port, client, timeout)
                    self._open[key] = session
                return amqp_management.state(session)
            except amqp_management.ManagementError:
                self.close(key)
        return None

    def keep_alive(self) -> None:
        for key, session in list(self._open.items()):
            try:
                session.keep_alive()
            except amqp_management.ManagementError:
                self.close(key)

    def close(self, key: str) -> None:
        session = self._open.pop(key, None)
        if session is not None:
            session.close()

    def close_all(self) -> None:
        for key in list(self._open):
            self.close(key)


class Skrouterd(seam.Router):
    kind: ClassVar[seam.RouterKind] = "real"
    program: ClassVar[str] = PROGRAM

    def __init__(self, home: str, reason: str = "") -> None:
        super().__init__(home, reason)
        self.prefix = Path(home)

    @property
    def binary(self) -> Path:
        return self.prefix / "sbin" / "skrouterd"

    @property
    def python_dir(self) -> Path:
        """The router's Python agent (``-I``)."""
        return self.prefix / "lib" / "skupper-router" / "python"

    @property
    def default_config(self) -> Path:
        """The image's default config, used when ``/tmp/skrouterd.<type>`` could not be
        written: the install's own, else the system's (a distribution's package)."""
        own = self.prefix / "etc" / "skupper-router" / "skrouterd.conf"
        return own if own.is_file() or not SYSTEM_CONFIG.is_file() else SYSTEM_CONFIG

    def config(self, host: hostenv.HostInfo, env: Mapping[str, str]) -> seam.Launch:
        """configure.sh's ``/tmp/skrouterd.<type>``, adapted beside the container's ``/tmp``
        (``launch.adapt_json``), and the skrouterd command line that runs on it."""
        ext = env.get("QDROUTERD_CONF_TYPE") or "conf"
        out_file = f"/tmp/skrouterd.{ext}"
        tmp_dir = hostenv.container_path("/tmp", env)
        if tmp_dir == Path("/tmp"):
            raise RuntimeError("the container has no /tmp of its own (no /tmp mount)")
        writable = launch.tmp_writable(host, env)
        text, stdout, stderr = launch.configure(env, out_file, writable)
        copy = hostenv.container_path(out_file, env)
        if text is not None:
            copy.write_text(text)
        if writable and copy.is_file():  # launch.sh: `[ -f $CONFIG_FILE ] && ARGS="-c ..."`
            source = copy.read_text()
            adapted = tmp_dir.parent / f"{launch.ADAPTED_NAME}.{ext}"
            given = (
                launch.adapt_json(source, host, env)
                if ext == "json"
                else launch.adapt_conf(source, host)
            )
        else:
            adapted = tmp_dir.parent / f"{launch.ADAPTED_NAME}-default.conf"
            given = launch.adapt_conf(self.default_config.read_text(), host)
        adapted.write_text(given)
        argv = [str(self.binary), "-c", str(adapted), "-I", str(self.python_dir)]
        return seam.Launch(given, stdout, stderr, argv)

    def management(self) -> seam.Management:
        return AmqpManagement()

    def query(
        self, address: str, port: int, client_cert: Path | None = None, timeout: float = 2.0
    ) -> dict[str, Any] | None:
        cert = amqp_management.ClientCert(client_cert) if client_cert is not None else None
        return amqp_management.query_state(address, port, cert, timeout)

    def delete(
        self,
        address: str,
        port: int,
        entity: tuple[str, str],
        client_cert: Path | None = None,
        timeout: float = 2.0,
    ) -> str | None:
        cert = amqp_management.ClientCert(client_cert) if client_cert is not None else None
        try:
            with amqp_management.Management(address, port, cert, timeout) as management:
                management.delete(*entity)
        except amqp_management.ManagementError as exc:
            return str(exc)
        return None

    def version(self) -> str:
        return _version(self.binary)[0]

    def describe(self) -> str:
        return f"router skrouterd {self.version()} (real)"
