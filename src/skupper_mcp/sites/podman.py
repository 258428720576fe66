"""Skupper on one podman host (a provider hub or the local consumer), through a connector.

Every method runs one remote command (a small script), raises the connector's errors on
failure, and returns a one-line detail for the step that ran it. Deciding *which* methods to
call is the engine's job; this module only knows how.
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass

import yaml

from ..connectors.base import Connector
from ..connectors.shell import ENV_PRELUDE, quote
from ..facts.site_state import (
    RouterContainer,
    SiteState,
    client_cert_script,
    parse_client_cert,
    parse_site_state,
    site_state_script,
)
from . import units
from .resources import ClientCert, Resource

READ_TIMEOUT = 30.0
SKUPPER_TIMEOUT = 120.0
TMPFS_SPEC = "/tmp:rw,size=10M,mode=1777"
SSL_PROFILE_BASE_PATH = "/etc/skupper-router"
# Environment podman adds by itself; never copy it onto a re-created container.
_PODMAN_OWN_ENV = {"PATH", "HOSTNAME", "HOME", "container", "TERM"}


class SiteStateError(RuntimeError):
    """The state script's output was cut short (the host went away mid-read)."""


@dataclass(frozen=True)
class SiteArchive:
    """A site's backup as read from the host: the tar.gz and the files it should hold."""

    archive: bytes
    files: list[str]


@dataclass
class PodmanSite:
    """The Skupper namespace ``namespace`` on the host behind ``connector``."""

    connector: Connector
    namespace: str
    model_url: str | None = None

    @property
    def host(self) -> str:
        return self.connector.host

    def _nsdir(self) -> str:
        return (
            f'"${{XDG_DATA_HOME:-$HOME/.local/share}}/skupper/namespaces/"{quote(self.namespace)}'
        )

    async def _run(
        self, *lines: str, timeout: float = SKUPPER_TIMEOUT, stdin: str | None = None
    ) -> str:
        script = "\n".join([ENV_PRELUDE, "set -e", *lines])
        result = await self.connector.run(script, timeout=timeout, check=True, stdin=stdin)
        return result.stdout

    async def read(self) -> SiteState:
        """The site's whole state, in one round trip."""
        result = await self.connector.run(
            site_state_script(self.namespace, self.model_url), timeout=READ_TIMEOUT
        )
        state = parse_site_state(result.stdout)
        if not state.complete:
            raise SiteStateError(
                f"reading the state of {self.host} was cut short: {result.stderr.strip()[-200:]}"
            )
        return state

    async def install_controller(self) -> str:
        await self._run("skupper system install")
        return "system controller installed"

    async def apply(self, resources: list[Resource]) -> str:
        """Write resources into input/resources (``skupper system apply``)."""
        docs = yaml.safe_dump_all(resources, sort_keys=False)
        await self._run(f"skupper system apply -n {quote(self.namespace)} -f -", stdin=docs)
        names = ", ".join(f"{r['kind']}/{r['metadata']['name']}" for r in resources)
        return f"applied {names}"

    async def render(self, first_time: bool) -> str:
        """``system start`` the first time, ``system reload`` when the inputs changed."""
        verb = "start" if first_time else "reload"
        await self._run(f"skupper system {verb} -n {quote(self.namespace)}")
        return f"skupper system {verb}"

    async def recreate_router_with_tmpfs(self, router: RouterContainer) -> str:
        """Re-create the router container with a tmpfs /tmp and SSL_PROFILE_BASE_PATH.

        Setup only: the flags live in the container, so later podman stop/start (and the
        auto-restart unit) keep them. ``up`` must never do this (the seed's v7.3.0 fix).
        """
        name = units.router_container(self.namespace)
        create = " ".join(shlex.quote(a) for a in _recreate_args(name, router.inspect))
        await self._run(f"podman rm -f {quote(name)} >/dev/null", create + " >/dev/null")
        return "router re-created with --tmpfs /tmp and SSL_PROFILE_BASE_PATH"

    async def open_certs(self) -> str:
        """The router runs as another uid in its container: make the certs readable."""
        await self._run(f"chmod -R o+r {self._nsdir()}/runtime/certs")
        return "chmod -R o+r runtime/certs"

    async def install_units(self, state: SiteState) -> str:
        """Disable Skupper's units, then write ours (no [Install]) and reload systemd."""
        podman = state.podman_path or "podman"
        wanted = units.site_units(self.namespace, state.user, podman)
        lines = [
            "u=$HOME/.config/systemd/user",
            'mkdir -p "$u" "$HOME/.local/share/skupper-mcp"',
            "systemctl --user disable "
            + " ".join(quote(w.name) for w in wanted)
            + " >/dev/null 2>&1 || true",
        ]
        for w in wanted:
            lines.append(_write_file(f'"$u"/{quote(w.name)}', w.content))
        lines.append(_write_file(f'"$HOME"/{units.WATCH_SCRIPT_PATH}', units.watch_script(podman)))
        lines.append("systemctl --user daemon-reload")
        await self._run(*lines)
        return "auto-restart units installed (disabled at boot)"

    async def systemctl(self, verb: str, unit_names: list[str]) -> str:
        await self._run(f"systemctl --user {verb} " + " ".join(quote(u) for u in unit_names))
        return f"systemctl --user {verb} {' '.join(unit_names)}"

    async def podman_stop(self, container: str) -> str:
        await self._run(f"podman stop -t 10 {quote(container)} >/dev/null 2>&1 || true")
        return f"podman stop {container} (safety net)"

    async def client_cert(self, cert_dir: str) -> ClientCert:
        """The client certificate peers use to link here. Holds a private key."""
        result = await self.connector.run(
            client_cert_script(self.namespace, cert_dir), timeout=READ_TIMEOUT, check=True
        )
        files = parse_client_cert(result.stdout)
        if not files:
            raise SiteStateError(f"{self.host} has no client certificate {cert_dir} yet")
        return ClientCert(
            ca_crt=base64.b64decode(files["ca.crt"]),
            tls_crt=base64.b64decode(files["tls.crt"]),
            tls_key=base64.b64decode(files["tls.key"]),
        )

    async def backup_archive(self) -> SiteArchive:
        """A tar.gz of the namespace's inputs and CAs (what teardown keeps), with the list
        of files the host had, so the caller can check that the archive holds them all.

        The archive is written to a file first: a ``tar`` that fails ends the script
        (``set -e``) instead of handing a pipe's partial output on as a backup.
        """
        out = await self._run(
            f"d={self._nsdir()}",
            '[ -d "$d" ] || exit 0',
            'cd "$d"; set --',
            'for p in input runtime/issuers; do [ -e "$p" ] && set -- "$@" "$p"; done',
            "[ $# -gt 0 ] || exit 0",
            'find "$@" -type f | sed "s/^/@@file /"',
            "t=$(mktemp); trap 'rm -f \"$t\"' EXIT",
            'tar -czf "$t" "$@"',
            'printf "@@archive "; base64 -w0 < "$t"; echo',
            timeout=READ_TIMEOUT,
        )
        files = []
        archive = b""
        for line in out.splitlines():
            if line.startswith("@@file "):
                files.append(line.removeprefix("@@file "))
            elif line.startswith("@@archive "):
                archive = base64.b64decode(line.removeprefix("@@archive ").strip())
        return SiteArchive(archive=archive, files=files)

    async def restore_issuer(self, files: dict[str, bytes]) -> str:
        """Give a new namespace the CA of a backup (input/issuers overrides the generated CA).

        The CA's key travels on stdin, never on a command line another user could read.
        """
        names = [name for name in files if name in ("ca.crt", "tls.crt", "tls.key")]
        stdin = "".join(f"{name} {base64.b64encode(files[name]).decode()}\n" for name in names)
        await self._run(
            f"d={self._nsdir()}/input/issuers/skupper-site-ca",
            'mkdir -p "$d"',
            'chmod 700 "$d"',
            "umask 077",
            'while read -r name data; do printf %s "$data" | base64 -d > "$d/$name"; done',
            stdin=stdin,
        )
        return "restored the site CA from the last backup"

    async def remove(self, state: SiteState) -> str:
        """Remove the site: units, containers, namespace (inputs and CAs are backed up first)."""
        user = state.user or "$(id -un)"
        wanted = [units.router_unit(self.namespace), units.controller_unit(user)]
        await self._run(
            "systemctl --user stop "
            + " ".join(quote(u) for u in wanted)
            + " >/dev/null 2>&1 || true",
            f"skupper system stop -n {quote(self.namespace)} >/dev/null 2>&1 || true",
            "skupper system uninstall >/dev/null 2>&1 || true",
            "u=$HOME/.config/systemd/user",
            "for f in "
            + " ".join(quote(u) for u in wanted)
            + '; do rm -f "$u/$f" "$u/default.target.wants/$f"; done',
            f"podman rm -f {quote(units.router_container(self.namespace))} >/dev/null 2>&1 || true",
            f'rm -f "$HOME"/{units.WATCH_SCRIPT_PATH}',
            f"rm -rf {self._nsdir()}",
            "systemctl --user daemon-reload",
        )
        return "units, containers and namespace removed"


def _write_file(path_expr: str, content: str) -> str:
    """A shell line that writes ``content`` (nothing secret) to a file; base64 keeps quoting
    out of it."""
    b64 = base64.b64encode(content.encode()).decode()
    return f"printf %s {b64} | base64 -d > {path_expr}"


def _recreate_args(name: str, inspect: dict[str, object]) -> list[str]:
    """``podman create`` arguments that rebuild the router as it was, plus the workarounds."""
    config = inspect.get("Config") if isinstance(inspect.get("Config"), dict) else {}
    host_config = inspect.get("HostConfig") if isinstance(inspect.get("HostConfig"), dict) else {}
    assert isinstance(config, dict) and isinstance(host_config, dict)
    image = str(inspect.get("ImageName") or config.get("Image") or inspect.get("Image") or "")
    args = ["podman", "create", "--name", name, "--network", "host"]
    restart = (host_config.get("RestartPolicy") or {}).get("Name") or "always"
    args += ["--restart", str(restart)]
    for key, value in sorted((config.get("Labels") or {}).items()):
        args += ["--label", f"{key}={value}"]
    env = [
        str(e) for e in config.get("Env") or [] if str(e).split("=", 1)[0] not in _PODMAN_OWN_ENV
    ]
    env = [e for e in env if not e.startswith("SSL_PROFILE_BASE_PATH=")]
    for item in [*env, f"SSL_PROFILE_BASE_PATH={SSL_PROFILE_BASE_PATH}"]:
        args += ["-e", item]
    mounts = inspect.get("Mounts")
    for mount in mounts if isinstance(mounts, list) else []:
        if isinstance(mount, dict) and mount.get("Source") and mount.get("Destination"):
            if mount["Destination"] == "/tmp":
                continue
            args += ["-v", f"{mount['Source']}:{mount['Destination']}:z"]
    args += ["--tmpfs", TMPFS_SPEC, image]
    return args
