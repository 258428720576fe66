"""Skupper on one podman host (a provider hub or the local consumer), through a connector.

The reads (``read``, ``client_cert``, ``backup_archive``) run at once. Every change is built
first as a ``Script`` (data: the script, a one-line summary, the detail it reports) and run by
``execute``, which raises the connector's errors on failure; so a plan can show what would run.
Deciding *which* scripts to run is the engine's job; this module only knows how.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import logging
import os
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import yaml

from ..connectors.base import Connector
from ..connectors.shell import program, quote
from ..connectors.ssh import SSHConnector
from ..errors import CommandError, PullFailed, SiteStateError, UserManagerDown
from ..facts import names
from ..facts.connector_status import (
    MAX_CONNECTORS_BYTES,
    ConnectorStatus,
    connector_status_script,
    parse_connector_status,
)
from ..facts.drain import DRAIN_SCRIPT, Drained, drain_operands, parse_drain
from ..facts.framing import safe_label, split_frames
from ..facts.images import PullState, parse_pull, pull_refused, release_images
from ..facts.logs import (
    JournalLogRead,
    PodmanLogRead,
    journal_logs_script,
    log_search_script,
    parse_journal_logs,
    parse_log_search,
    parse_podman_logs,
    podman_logs_script,
)
from ..facts.model_endpoint import (
    MODELS_MAX_BYTES,
    answer_cut,
    models_command,
    parse_model_ids,
)
from ..facts.mounts import volume_spec
from ..facts.precheck import SiteFacts, parse_site_facts, site_facts_script
from ..facts.private_keys import close_keys_command
from ..facts.site_state import (
    ContainerState,
    KnownSkupper,
    RouterContainer,
    SiteState,
    client_cert_script,
    parse_client_cert,
    parse_podman_ps,
    parse_site_state,
    podman_ps_script,
    site_state_script,
)
from ..facts.skupper_version import Version
from ..facts.unparsed import ParseError, Unparsed, first_line
from ..facts.userns import userns_args
from ..results import SSHSetting
from . import units
from .resources import API_VERSION, ClientCert, Resource
from .work import RETRY_PAUSE, RUNS, Script

log = logging.getLogger(__name__)

READ_TIMEOUT = 30.0
#: Where scripts/pull.sh keeps a pull's lines, under the login's home; how often they are read.
PULL_DIR = ".cache/skupper-mcp/pull"
PULL_POLL = 2.0
#: Seconds a site's state may take to parse (a healthy one takes milliseconds).
PARSE_BUDGET = 5.0
#: What Go's RemoveAll says when a file appeared in a directory it was emptying: how a
#: ``skupper system reload`` (or ``stop``) that raced the controller's status write fails.
REMOVAL_RACE = "directory not empty"
#: What ``podman rm -f`` says when the container's shm was still mounted as it removed the
#: container's files (podman's own cleanup process, started by conmon as the container died,
#: racing the removal). The container is out of podman's database by then and only its
#: storage is left, which a second ``podman rm -f`` removes: rm tries the name as a storage
#: container first (libpod/runtime_ctr.go removeContainer, pkg/domain/infra/abi/containers.go
#: ContainerRm, runtime_cstorage.go RemoveStorageContainer, podman v4.3.1 and v5.8.0).
REMOVAL_BUSY = "device or resource busy"
LOGS_TIMEOUT = 15.0
TMPFS_SPEC = "/tmp:rw,size=10M,mode=1777"
SSL_PROFILE_BASE_PATH = "/etc/skupper-router"
# Environment podman adds by itself; never copy it onto a re-created container.
_PODMAN_OWN_ENV = {"PATH", "HOSTNAME", "HOME", "container", "TERM"}


@dataclass(frozen=True)
class SiteArchive:
    """A site's backup as read from the host: the tar.gz and the files it should hold."""

    archive: bytes
    files: list[str]


def _reset_failed(quoted_units: str) -> str:
    """The shell that clears systemd's failed state and start counter of units already
    quoted, before a command that starts them; on a unit not loaded it changes nothing."""
    return f"$SKMCP_CTL reset-failed {quoted_units} 2>/dev/null || true; "


class KnownVersions:
    """The skupper version each host's binary had when it was last read (``KnownSkupper``),
    for the reads of one engine: a read of a host whose binary is unchanged runs no
    ``skupper version`` (a Go program's start on every warm status)."""

    def __init__(self) -> None:
        self._by_host: dict[str, KnownSkupper] = {}

    def get(self, host: str) -> KnownSkupper | None:
        return self._by_host.get(host)

    def learn(self, host: str, state: SiteState) -> None:
        """Keep the version a read ran ``skupper version`` for, by its binary's key; one
        that gave no version, or a binary without a key, is asked again next time."""
        if state.skupper_reused:
            return
        if state.skupper_key and state.skupper.cli is not None:
            self._by_host[host] = KnownSkupper(state.skupper_key, state.skupper)
        else:
            self._by_host.pop(host, None)


@dataclass
class PodmanSite:
    """The Skupper namespace ``namespace`` on the host behind ``connector``; with
    ``known_versions``, the skupper versions its engine has read (``KnownVersions``)."""

    connector: Connector
    namespace: str
    model_url: str | None = None
    #: a host's other model endpoints, read in the same round trip (site_state_script)
    more_model_urls: tuple[str, ...] = ()
    known_versions: KnownVersions | None = None

    @property
    def host(self) -> str:
        return self.connector.host

    @property
    def ssh_settings(self) -> list[SSHSetting]:
        """What the last SSH connect dialled, each value with the file that gave it; empty
        for a site driven by local commands or not connected yet."""
        if isinstance(self.connector, SSHConnector) and self.connector.resolved is not None:
            return list(self.connector.resolved.settings)
        return []

    def _nsdir(self) -> str:
        return f'"$SKMCP_DATA/namespaces/"{quote(self.namespace)}'

    async def execute(self, script: Script) -> str:
        """Run a script built by this site; its ``done`` line on success."""
        for run in range(1, RUNS + 1):
            try:
                await self._output(script)
            except CommandError as e:
                transient = script.retry_when and script.retry_when in e.stderr + e.stdout
                if not transient or run == RUNS:
                    raise
                log.info("%s on %s: %s; running it again", script.summary, self.host, e)
                await asyncio.sleep(RETRY_PAUSE * run)
            else:
                break
        if run > 1:
            return f"{script.done} (ran {run} times: the earlier runs said {script.retry_when!r})"
        return script.done

    async def _output(self, script: Script) -> str:
        result = await self.connector.run(
            script.text, timeout=script.timeout, check=True, stdin=script.stdin
        )
        return result.stdout

    async def read(self, log_lines: int = 0) -> SiteState:
        """The site's whole state, in one round trip (with ``log_lines`` of the router's and
        controller's logs)."""
        known = self.known_versions.get(self.host) if self.known_versions else None
        command = site_state_script(
            self.namespace,
            self.model_url,
            log_lines,
            known.key if known else "",
            self.more_model_urls,
        )
        result = await self.connector.run(command, timeout=READ_TIMEOUT)
        # in a worker thread, within its budget: one host's files never hold up another's call
        state = await anyio.to_thread.run_sync(
            functools.partial(parse_site_state, result.stdout, budget=PARSE_BUDGET, known=known)
        )
        if state.refused:
            raise SiteStateError(
                self.host,
                f"{self.host} sent {'; and '.join(state.refused)}. Nothing was run with it.",
                command=command,
            )
        boot = state.boot
        if state.complete and boot.no_bus is not None:
            raise UserManagerDown(
                self.host, state.user, boot.no_bus, boot.linger, boot.boot_id, boot.unhandled_reboot
            )
        if not state.complete:
            raise SiteStateError(
                self.host,
                f"reading the state of {self.host} was cut short: {result.stderr.strip()[-200:]}",
                command=command,
                exit_status=result.exit_status,
                stderr=result.stderr,
            )
        if self.known_versions is not None:
            self.known_versions.learn(self.host, state)
        return state

    async def logs(self, lines: int, max_bytes: int, container: str | None = None) -> PodmanLogRead:
        """The last ``lines`` lines of a container's log (None: the login user's system
        controller), at most about ``max_bytes`` of them, in one round trip. A container that
        does not exist is a read with ``exists == 1``, not an error."""
        command = podman_logs_script(lines, max_bytes, container)
        result = await self.connector.run(command, timeout=LOGS_TIMEOUT)
        read = parse_podman_logs(result.stdout, max_bytes)
        what = f"podman logs {read.container or container or 'the controller'}"
        if read.exists is None or (read.exists == 0 and read.rc is None):
            raise SiteStateError(
                self.host,
                f"reading the log on {self.host} was cut short: {result.stderr.strip()[-200:]}",
                command=command,
                exit_status=result.exit_status,
                stderr=result.stderr,
            )
        if read.exists not in (0, 1):
            raise CommandError(
                self.host,
                command,
                read.exists,
                result.stderr,
                summary=f"podman container exists {read.container}",
            )
        if read.exists == 0 and read.rc != 0:
            # podman's own error, after whatever log lines came first (CommandError redacts)
            raise CommandError(self.host, command, read.rc, read.text, summary=what)
        return read

    async def journal_logs(self, lines: int, max_bytes: int, container: str) -> JournalLogRead:
        """The journal's last ``lines`` lines of ``container`` (podman's journald log driver),
        with its log driver: the fallback for a ``podman logs`` that printed nothing. What
        the journal cannot say is in the read (``rc``, ``stderr``), not an error."""
        command = journal_logs_script(lines, max_bytes, container)
        result = await self.connector.run(command, timeout=LOGS_TIMEOUT)
        return parse_journal_logs(result.stdout, max_bytes)

    async def log_search(
        self, container: str, needle: str, lines: int, max_bytes: int
    ) -> list[str] | None:
        """The last ``lines`` lines of ``container``'s whole log that hold ``needle`` (None:
        the search did not finish)."""
        command = log_search_script(container, needle, lines, max_bytes)
        result = await self.connector.run(command, timeout=LOGS_TIMEOUT)
        return parse_log_search(result.stdout, max_bytes)

    async def connector_status(self, container: str) -> list[ConnectorStatus] | None:
        """The router's connectors as its management reports them (None: the site has no
        management listener); raises ``Unparsed`` when the answer cannot be read."""
        command = connector_status_script(self.namespace, container, MAX_CONNECTORS_BYTES)
        result = await self.connector.run(command, timeout=LOGS_TIMEOUT)
        return parse_connector_status(result.stdout, MAX_CONNECTORS_BYTES)

    def drain(self, routing_key: str) -> Script:
        """Delete the running router's tcpConnectors for ``routing_key`` through its
        management (``facts.drain``): the key leaves the network, the router runs on. As a
        Script for a plan; ``drained`` runs it and reads what it did."""
        container = names.router_container(self.namespace)
        return Script.shipped(
            f"podman exec {container} skmanage delete --type=tcpConnector (address {routing_key})",
            DRAIN_SCRIPT,
            drain_operands(self.namespace, container, routing_key),
            f"withdrew {routing_key}",
            timeout=LOGS_TIMEOUT,
        )

    async def drained(self, routing_key: str) -> Drained:
        """Run ``drain`` (the very script a plan shows); raises ``Unparsed`` when its output
        cannot be read."""
        work = self.drain(routing_key)
        result = await self.connector.run(work.text, timeout=work.timeout)
        return parse_drain(result.stdout, routing_key)

    async def facts(self, *, with_ports: bool, timeout: float) -> SiteFacts:
        """What the precheck reads of the host (tools, versions, and bound ports when asked)."""
        command = site_facts_script(self.namespace, with_ports=with_ports)
        result = await self.connector.run(command, timeout=timeout)
        return parse_site_facts(result.stdout)

    async def served_model_ids(self, timeout: float, index: int = 0) -> list[str] | None:
        """The model ids the host's ``index``-th model endpoint reports (None when it
        answers no list); ``SiteStateError`` when its answer is longer than a model list
        may be."""
        assert self.model_url is not None, "only a provider has a model endpoint"
        url = self.model_url if index == 0 else self.more_model_urls[index - 1]
        result = await self.connector.run(models_command(url), timeout=timeout)
        if answer_cut(result.stdout):
            raise SiteStateError(
                self.host,
                f"the model endpoint's /v1/models answer passed {MODELS_MAX_BYTES // 1024} KiB "
                "and was cut off there",
            )
        return parse_model_ids(result.stdout) if result.ok else None

    async def answer(self, timeout: float) -> None:
        """Run ``true`` on the host: proves it answers and runs commands."""
        await self.connector.run("true", timeout=timeout, check=True)

    async def containers(self, timeout: float) -> dict[str, ContainerState]:
        """Every container of the login user's podman, by name (``podman ps -a``)."""
        result = await self.connector.run(podman_ps_script(), timeout=timeout, check=True)
        try:
            return parse_podman_ps(result.stdout)
        except Unparsed as exc:
            error = ParseError(
                "containers", "podman ps -a --format json", first_line(result.stdout), str(exc)
            )
            raise SiteStateError(
                self.host, f"{self.host}: {error}", command=result.command, stderr=result.stderr
            ) from exc

    async def pull_images(
        self, release: Version | None, say: Callable[[str], Awaitable[None]], deadline: float
    ) -> str:
        """Pull the images ``release`` runs that the host lacks, with ``podman pull`` in the
        background (``scripts/pull.sh``), saying what it copies as it goes, within
        ``deadline`` seconds of its own; ``PullFailed`` names the image, its registry and
        what the user can do. Skupper then finds them there and its own pull is quick."""
        images = release_images(release)
        if not images:
            return f"Skupper {release or '(release unknown)'} pulls its images itself"
        state = await self._pull("start", *images)
        if state.unwritable:
            return f"~/{PULL_DIR} cannot be written: Skupper pulls its images itself, silently"
        if not state.pulls:
            return "already on the host: " + ", ".join(state.present)
        for pull in state.pulls:
            await say(f"{self.host}: pulling the {pull.component} image {pull.image}")
        shown: dict[str, str] = {}
        started = asyncio.get_running_loop().time()
        while not state.done:
            if asyncio.get_running_loop().time() - started > deadline:
                await self._pull("stop")
                pending = ", ".join(p.image for p in state.pulls if p.status is None)
                raise PullFailed(
                    self.host,
                    f"pulling {pending} did not end within {deadline:.0f} s (the last line: "
                    f"{state.pulls[-1].progress()}); a slow registry or link: pull it on "
                    f"{self.host} by hand (podman pull IMAGE) or from a nearer mirror "
                    "(SKUPPER_IMAGE_REGISTRY), then run setup again",
                )
            await asyncio.sleep(PULL_POLL)
            state = await self._pull("poll")
            for pull in state.pulls:
                line = pull.progress()
                if pull.lines and shown.get(pull.image) != line:
                    shown[pull.image] = line
                    await say(f"{self.host}: {pull.image}: {line}")
        failed = state.failed
        if failed is not None:
            raise PullFailed(self.host, pull_refused(failed, self.host))
        return "pulled " + ", ".join(f"{p.image} ({p.layers} layers)" for p in state.pulls)

    async def _pull(self, mode: str, *images: str) -> PullState:
        result = await self.connector.run(
            program("pull.sh", mode, PULL_DIR, *images), timeout=READ_TIMEOUT, check=True
        )
        state = parse_pull(result.stdout)
        if not state.complete:
            raise SiteStateError(self.host, f"scripts/pull.sh {mode} was cut short")
        return state

    def install_controller(self) -> Script:
        return Script(
            "skupper system install", ("skupper system install",), "system controller installed"
        )

    def apply(self, resources: list[Resource]) -> Script:
        """Write resources into input/resources (``skupper system apply``); the documents
        (a link's Secret holds a private key) travel on stdin."""
        docs = yaml.safe_dump_all(resources, sort_keys=False)
        command = f"skupper system apply -n {quote(self.namespace)} -f -"
        names = ", ".join(f"{r['kind']}/{r['metadata']['name']}" for r in resources)
        return Script(f"{command} ({names})", (command,), f"applied {names}", stdin=docs)

    def delete(self, keys: list[tuple[str, str]]) -> Script:
        """Remove resources from input/resources (``skupper system delete``, which takes
        each document's kind and name, system_delete.go@2.2.0); the documents on stdin."""
        docs = yaml.safe_dump_all(
            [{"apiVersion": API_VERSION, "kind": k, "metadata": {"name": n}} for k, n in keys],
            sort_keys=False,
        )
        command = f"skupper system delete -n {quote(self.namespace)} -f -"
        names = ", ".join(f"{k}/{n}" for k, n in keys)
        return Script(f"{command} ({names})", (command,), f"removed {names}", stdin=docs)

    def render(self, first_time: bool) -> Script:
        """``system start`` the first time, ``system reload`` when the inputs changed.

        A reload stops the router, whose controller then writes the Site's status into
        runtime/resources while the reload empties it: Go's RemoveAll fails on the new file,
        and the reload restores the namespace and starts the router again
        (fs_config_renderer.go@2.1.3 CleanupNamespaceForReload, compat/site_state_renderer.go@2.1.3
        Render). The window is one status write landing between RemoveAll's listing and its
        last unlink, so a second run almost always gets through.

        Either starts the namespace's unit (``systemctl start``, ``Failed to bootstrap:
        unable to create startup service`` when that fails), so a unit whose start limit our
        own quick restarts filled (a pool's strategy changed twice within ten seconds: two
        reloads) would refuse it: ``reset-failed`` first, as ``start`` does."""
        verb = "start" if first_time else "reload"
        command = f"skupper system {verb} -n {quote(self.namespace)}"
        reset = _reset_failed(quote(names.router_unit(self.namespace)))
        race = None if first_time else REMOVAL_RACE
        return Script(command, (reset + command,), f"skupper system {verb}", retry_when=race)

    def recreate_router_with_tmpfs(self, router: RouterContainer | None) -> Script:
        """Re-create the router container with a tmpfs /tmp and SSL_PROFILE_BASE_PATH, from
        its ``podman inspect`` (None in a plan made before the container exists).

        Setup only: the flags live in the container, so later podman stop/start (and the
        auto-restart unit) keep them. ``up`` must never do this
        (``test_up_never_recreates_the_router_and_setup_does_only_without_tmpfs``).
        """
        name = names.router_container(self.namespace)
        create = " ".join(
            shlex.quote(a) for a in _recreate_args(name, router.inspect if router else {})
        )
        return Script(
            f"podman rm -f {name}; podman create --name {name} ... --tmpfs {TMPFS_SPEC}",
            (f"podman rm -f {quote(name)} >/dev/null; {create} >/dev/null",),
            "router re-created with --tmpfs /tmp and SSL_PROFILE_BASE_PATH",
            retry_when=REMOVAL_BUSY,
        )

    def close_keys(self) -> Script:
        """Make every private-key file of the namespace 0600 (``private_keys``): Skupper
        writes them readable beyond their owner, and its router reads them as their owner
        (``--user`` with ``--userns=keep-id``), so nobody else needs them. The certificates
        themselves are left as Skupper writes them."""
        return Script(
            "chmod go-rwx the namespace's private keys (tls.key, Secret-*.yaml, runtime/links)",
            (close_keys_command(self._nsdir()),),
            "private keys made 0600",
        )

    def install_units(self, state: SiteState) -> Script:
        """Disable Skupper's units, write ours over them, reload systemd and enable ours
        (``WantedBy=default.target``: the site comes back when its host boots). The
        controller unit an earlier skupper-mcp wrote under
        ``<user>-skupper-controller.service`` goes."""
        podman = state.podman_path or "podman"
        wanted = units.site_units(self.namespace, state.user, podman)
        written = ", ".join(w.name for w in wanted)
        texts = [(w.name, _base64(w.content)) for w in wanted]
        return Script.shipped(
            f"write {written}, {names.WATCH_SCRIPT_PATH}; systemctl daemon-reload",
            "install-units.sh",
            (
                state.user,
                *_after_user(names.legacy_controller_unit),
                names.WATCH_SCRIPT_PATH,
                _base64(units.watch_script(podman)),
                *(word for pair in texts for word in pair),
            ),
            "auto-restart units installed (enabled at boot)",
        )

    def enable_podman_socket(self) -> Script:
        """Every ``skupper system`` command talks to podman through its API socket."""
        return Script(
            f"systemctl enable --now {names.PODMAN_SOCKET_UNIT}",
            (f"$SKMCP_CTL enable --now {names.PODMAN_SOCKET_UNIT}",),
            f"systemctl enable --now {names.PODMAN_SOCKET_UNIT}",
        )

    def systemctl(self, verb: str, unit_names: list[str]) -> Script:
        command = f"systemctl {verb} {' '.join(unit_names)}"
        return Script(
            command,
            (f"$SKMCP_CTL {verb} " + " ".join(quote(u) for u in unit_names),),
            command,
        )

    def start(self, unit_names: list[str], *, limit_hit: bool = False) -> Script:
        """``systemctl start`` after ``reset-failed``. Starting is the user's own request
        (up, setup), and a unit whose start limit was hit (five starts in ten seconds: a
        quick down/up cycle, or a crash loop the watch script gave up on) refuses a plain
        start until the interval passes. ``reset-failed`` flushes that counter (systemd
        ``src/core/unit.c``, ``unit_reset_failed``), the use systemd.unit(5) gives it; on a
        unit that is not loaded it fails, which changes nothing here. ``limit_hit``: the
        state read saw the limit hit, and the step says it was reset."""
        listed = " ".join(unit_names)
        quoted = " ".join(quote(u) for u in unit_names)
        done = f"systemctl enable --now {listed}"
        if limit_hit:
            done = (
                f"{listed} had hit systemd's start limit (start-limit-hit): "
                f"systemctl reset-failed, then {done}"
            )
        # enabled as it starts: a site the user brought up comes back when its host boots
        return Script(
            f"systemctl reset-failed {listed}; systemctl enable --now {listed}",
            (f"{_reset_failed(quoted)}$SKMCP_CTL enable --now {quoted}",),
            done,
        )

    def remove_container(self, container: str) -> Script:
        return Script(
            f"podman rm -f {container}",
            (f"podman rm -f {quote(container)} >/dev/null",),
            f"removed {container}",
            retry_when=REMOVAL_BUSY,
        )

    def podman_stop(self, container: str) -> Script:
        return Script(
            f"podman stop -t 10 {container}",
            (f"podman stop -t 10 {quote(container)} >/dev/null 2>&1 || true",),
            f"podman stop {container} (safety net)",
        )

    async def client_cert(self, cert_dir: str) -> ClientCert:
        """The client certificate peers use to link here. Holds a private key."""
        result = await self.connector.run(
            client_cert_script(self.namespace, cert_dir), timeout=READ_TIMEOUT, check=True
        )
        files = parse_client_cert(result.stdout)
        if not files:
            raise SiteStateError(self.host, f"{self.host} has no client certificate {cert_dir} yet")
        try:
            return ClientCert(
                ca_crt=base64.b64decode(files["ca.crt"]),
                tls_crt=base64.b64decode(files["tls.crt"]),
                tls_key=base64.b64decode(files["tls.key"]),
            )
        except binascii.Error as exc:
            raise SiteStateError(
                self.host, f"{self.host}'s client certificate {cert_dir} is garbled: {exc}"
            ) from exc

    async def backup_archive(self) -> SiteArchive:
        """A tar.gz of the namespace's inputs and CAs (what teardown keeps), with the list
        of files the host had, so the caller can check that the archive holds them all.

        The archive is written to a file first: a ``tar`` that fails ends the script
        (``set -e``) instead of handing a pipe's partial output on as a backup.
        """
        out = await self._output(self.backup_script())
        files: list[str] = []
        archive = b""
        for frame in split_frames(out):
            if frame.tag == "files":
                files = _listed_names(self.host, frame.body)
            elif frame.tag == "archive":
                try:
                    archive = base64.b64decode(frame.body.strip(), validate=True)
                except binascii.Error as exc:
                    raise SiteStateError(
                        self.host, f"the backup from {self.host} is garbled: {exc}"
                    ) from exc
        return SiteArchive(archive=archive, files=files)

    def backup_script(self) -> Script:
        """The read behind ``backup_archive`` (``scripts/backup.sh``): it changes nothing on
        the host."""
        return Script.shipped(
            "tar -cz input runtime/issuers (kept in the local backup folder)",
            "backup.sh",
            (self.namespace,),
            "backed up",
            timeout=READ_TIMEOUT,
        )

    def restore_issuer(self, files: dict[str, bytes]) -> Script:
        """Give a new namespace the CA of a backup (input/issuers overrides the generated CA).

        The CA's key travels on stdin, never on a command line another user could read.
        """
        names = [name for name in files if name in ("ca.crt", "tls.crt", "tls.key")]
        stdin = "".join(f"{name} {base64.b64encode(files[name]).decode()}\n" for name in names)
        return Script.shipped(
            f"write input/issuers/skupper-site-ca ({', '.join(names)}, from stdin)",
            "restore-issuer.sh",
            (self.namespace,),
            "restored the site CA from the last backup",
            stdin=stdin,
        )

    def remove(self, state: SiteState) -> Script:
        """Remove the site: units, containers, namespace (inputs and CAs are backed up first).

        ``system stop`` removes nothing on a namespace that was never rendered (it needs
        ``internal/platform.yaml``), and 2.1.x ``system uninstall`` halts while any
        directory is left under ``namespaces/``. So each piece is removed here as well, in
        an order that works on a half-built site. The controller writes a namespace's status
        back with ``MkdirAll`` (``pkg/nonkube/api/site_state.go@2.1.3:389``), as its router or
        the controller itself stops: a write that lands while or after the namespace goes
        makes part of it again, so the removal runs again, after the controller stopped, and
        the namespace being removed never counts as another. The controller serves every
        namespace of the user: it is removed only when no other namespace holds a site (a
        ``runtime`` directory); otherwise it is kept and ``removed`` says so.
        """
        ours = [names.router_unit(self.namespace), names.controller_unit()]
        router = names.router_container(self.namespace)
        return Script.shipped(
            f"systemctl stop {ours[0]}; skupper system stop; rm {router}, its unit, the"
            f" namespace; if no other namespace holds a site: skupper system uninstall, rm"
            f" {ours[1]}",
            "remove.sh",
            (
                self.namespace,
                *ours,
                router,
                state.user,
                *_after_user(names.legacy_controller_unit, names.controller_container),
                names.WATCH_SCRIPT_PATH,
            ),
            "units, containers, controller and namespace removed",
        )

    async def removed(self, state: SiteState) -> str:
        """Run ``remove``; what it removed, and the controller it kept for other namespaces."""
        out = await self._output(self.remove(state))
        kept = [
            frame.argument
            for frame in split_frames(out)
            if frame.tag == "kept" and safe_label(frame.argument)
        ]
        if kept:
            return (
                "router unit, container and namespace removed; the system controller is kept: "
                f"namespace {', '.join(sorted(kept))} still holds a site"
            )
        return self.remove(state).done


def _listed_names(host: str, body: str) -> list[str]:
    """The names ``find -print0 | base64`` printed, decoded as ``tarfile`` decodes a member's
    name (UTF-8, a byte that is not as a surrogate escape), so the two compare."""
    try:
        raw = base64.b64decode(body.strip(), validate=True)
    except binascii.Error as exc:
        raise SiteStateError(host, f"the backup's file list from {host} is garbled: {exc}") from exc
    return [os.fsdecode(name) for name in raw.split(b"\0") if name]


def _after_user(*name_for: Callable[[str], str]) -> tuple[str, ...]:
    """What follows the login's user name in each of these names (the script puts the
    name, from the state read or asked of the host, in front)."""
    return tuple(make("") for make in name_for)


def _base64(content: str) -> str:
    """A file's text (nothing secret) as one plain word: base64 keeps quoting out of it."""
    return base64.b64encode(content.encode()).decode()


def _recreate_args(name: str, inspect: dict[str, object]) -> list[str]:
    """``podman create`` arguments that rebuild the router as it was, plus the workarounds."""
    config = inspect.get("Config") if isinstance(inspect.get("Config"), dict) else {}
    host_config = inspect.get("HostConfig") if isinstance(inspect.get("HostConfig"), dict) else {}
    assert isinstance(config, dict) and isinstance(host_config, dict)
    image = str(inspect.get("ImageName") or config.get("Image") or inspect.get("Image") or "")
    args = ["podman", "create", "--name", name, "--network", "host"]
    restart = (host_config.get("RestartPolicy") or {}).get("Name") or "always"
    args += ["--restart", str(restart)]
    # Skupper runs the router as the user's own uid:gid with --userns=keep-id (rootless):
    # without them it would run as the image's uid 10000, which cannot read the 0640
    # certificates (client/compat/container.go, fs_config_renderer.go).
    if config.get("User"):
        args += ["--user", str(config["User"])]
    args += userns_args(inspect)
    for key, value in sorted((config.get("Labels") or {}).items()):
        args += ["--label", f"{key}={value}"]
    env = [
        str(e) for e in config.get("Env") or [] if str(e).split("=", 1)[0] not in _PODMAN_OWN_ENV
    ]
    env = [e for e in env if not e.startswith("SSL_PROFILE_BASE_PATH=")]
    for item in [*env, f"SSL_PROFILE_BASE_PATH={SSL_PROFILE_BASE_PATH}"]:
        args += ["-e", item]
    # every mount as it was: read-only, relabel (z, Z) and the rest kept (facts/mounts.py)
    mounts = inspect.get("Mounts")
    for mount in mounts if isinstance(mounts, list) else []:
        spec = volume_spec(mount)
        if spec is None or mount.get("Destination") == "/tmp":
            continue
        args += ["-v", spec]
    args += ["--tmpfs", TMPFS_SPEC, image]
    return args
