"""Running commands on a remote host over SSH (asyncssh), behind the Connector interface.

One connection per connector, opened on first use and reused for every command; a
connection that has died is reopened on the next command. Host keys are verified against
known_hosts: a changed key, or one marked @revoked for the host on any port, is always
refused; an unknown one is accepted (and recorded) only when
``SSHOptions.accept_new_host_keys`` says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skupper_mcp.connectors import shell, ssh_config
from skupper_mcp.connectors.base import (
    DEFAULT_COMMAND_TIMEOUT,
    CommandResult,
    SSHOptions,
    SSHTarget,
    read_output,
)
from skupper_mcp.connectors.listening import within
from skupper_mcp.connectors.shared import SharedAttempt
from skupper_mcp.errors import (
    CommandTimeout,
    ConnectError,
    HostKeyError,
    Kind,
    SiteConfigError,
    kind_of,
    unreached_of,
)

if TYPE_CHECKING:
    import asyncssh

__all__ = ["SSHConnector"]

log = logging.getLogger(__name__)

_PID_PREFIX = "skupper-mcp-pid="
#: Prefixed to every command: the remote sh reports its pid (which is its session's process
#: group: the login shell exec'd it, ``shell.login_command``) on stderr, so a command given up
#: on can be killed with its children.
PID_MARKER_COMMAND = f'printf "{_PID_PREFIX}%s\\n" "$$" >&2; '


class SSHConnector:
    """Runs commands on ``target`` over one reused SSH connection.

    ``name`` is the host's name in the topology (used in results and errors);
    ``target`` is where its SSH server is; ``options`` holds keys, host-key policy and
    timeouts shared by every host.
    """

    def __init__(self, name: str, target: SSHTarget, options: SSHOptions) -> None:
        self._name = name
        self._target = target
        self._options = options
        self._conn: asyncssh.SSHClientConnection | None = None
        self._opening: SharedAttempt[asyncssh.SSHClientConnection] = SharedAttempt()
        self.resolved: ssh_config.ResolvedSSH | None = None
        """Where the last connect dialled, and where each value came from."""
        self.connect_count = 0
        """How many connections this connector has opened (for tests and diagnostics)."""

    @property
    def host(self) -> str:
        """The host name used in results and errors."""
        return self._name

    @property
    def target(self) -> SSHTarget:
        """Where the host's SSH server is."""
        return self._target

    @property
    def connected(self) -> bool:
        """Whether an open connection is held right now."""
        return self._conn is not None and not self._conn.is_closed()

    async def connect(self) -> None:
        """Open the connection unless one is open. Concurrent callers share one attempt.

        Raises ``ConnectError`` (or ``HostKeyError``) when the host cannot be reached.
        """
        await self._connection()

    async def run(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_COMMAND_TIMEOUT,
        check: bool = False,
        stdin: str | None = None,
    ) -> CommandResult:
        """Run ``command`` through the remote user's shell; see ``Connector.run``."""
        import asyncssh

        started = time.monotonic()
        try:
            process = await self._opened(command)
        except (asyncssh.ChannelOpenError, asyncssh.DisconnectError, OSError):
            # The connection died since it was last used; nothing ran, so retry once.
            await self._drop_connection()
            try:
                process = await self._opened(command)
            except (asyncssh.ChannelOpenError, asyncssh.DisconnectError, OSError) as exc:
                await self._drop_connection()
                reason = getattr(exc, "reason", None) or str(exc)
                raise ConnectError(
                    self._name, f"connection lost to {self._address}: {reason}", kind=kind_of(exc)
                ) from exc
        remote = _RemoteCommand(process)
        try:
            async with asyncio.timeout(timeout):
                first_err = await remote.read_pid_marker()
                # A command that exits without reading its stdin closes the channel's
                # input: its exit status, not the write, is the answer (as subprocess does).
                with contextlib.suppress(BrokenPipeError):
                    if stdin is not None:
                        process.stdin.write(stdin)
                    process.stdin.write_eof()
                out, err = await read_output(
                    process.stdout.read, process.stderr.read, "", self._name, command
                )
                await process.wait_closed()
        except TimeoutError as exc:
            await asyncio.shield(self._end_remote(remote))
            raise CommandTimeout(
                self._name, command, timeout, summary=shell.summary(command)
            ) from exc
        except (asyncssh.Error, OSError) as exc:
            # The channel or the connection broke while the command ran.
            await self._drop_connection()
            reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
            raise ConnectError(
                self._name,
                f"connection lost while running a command on {self._address}: {reason}",
                kind=kind_of(exc),
            ) from exc
        except BaseException:
            await asyncio.shield(self._end_remote(remote))
            raise
        err = first_err + err
        exit_status = _exit_status(process)
        if exit_status is None:
            await self._drop_connection()
            raise ConnectError(
                self._name, f"connection lost while running a command on {self._address}"
            )
        result = CommandResult(
            host=self._name,
            command=command,
            exit_status=exit_status,
            stdout=out,
            stderr=err,
            seconds=time.monotonic() - started,
        )
        if check:
            result.raise_for_status()
        return result

    async def _opened(self, command: str) -> asyncssh.SSHClientProcess[str]:
        """``_open_process``, kept going when the caller is cancelled meanwhile, and the
        command then ended: the host starts it when it answers the exec request, before
        this side has read the answer, so a run given up on in between (its loop busy
        elsewhere) left it running."""
        opening = asyncio.ensure_future(self._open_process(command))
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                process = await opening  # within its own deadline
                await self._end_remote(_RemoteCommand(process))
            raise

    async def _end_remote(self, remote: _RemoteCommand) -> None:
        """End a command we gave up on. Ask sshd to signal it, close the channel, and
        kill its process group over a second channel: OpenSSH refuses signal requests
        for root sessions and does not signal commands without a terminal when their
        channel closes."""
        if not remote.marker_read:
            # The marker is the first thing the remote prints: it is there or very close.
            with contextlib.suppress(Exception):
                await within(remote.read_pid_marker(), 1)
        with contextlib.suppress(Exception):
            remote.process.send_signal("KILL")
        remote.process.close()
        conn = self._conn
        pid = remote.pid
        if pid is None or conn is None or conn.is_closed():
            return
        kill = f"kill -s KILL -- -{pid} 2>/dev/null || kill -s KILL {pid}"
        with contextlib.suppress(Exception):
            # ``kill -9 -- -PID`` is "Illegal number" to dash; ``-s KILL`` works in every sh.
            # A channel and a short command: a live sshd answers within the connect timeout,
            # counted in the time this process listened (a fixed 2 s of wall time, missed on
            # a busy machine, left the command running).
            await within(conn.run(shell.login_command(kill)), self._options.connect_timeout)
        log.debug("ended remote process group %s on %s", pid, self._name)

    async def close(self) -> None:
        """Close the connection. Safe to call twice."""
        self._opening.cancel()  # a connect in flight must not leave a connection behind
        await self._drop_connection()

    @property
    def _address(self) -> str:
        resolved = self.resolved
        if resolved is not None:
            return resolved.address
        return f"{self._target.host}:{self._target.port or ssh_config.DEFAULT_PORT}"

    async def _open_process(self, command: str) -> asyncssh.SSHClientProcess[str]:
        conn = await self._connection()
        seconds = self._options.connect_timeout
        try:
            # A held connection to a host that went silent (powered off, network gone)
            # would otherwise wait on TCP retransmits for minutes: a live sshd answers a
            # channel request at once, so the connect timeout bounds it too, counted in the
            # time this process listened (``listening``): a loop held by other work is not
            # a host that stopped answering.
            return await within(
                conn.create_process(
                    shell.login_command(PID_MARKER_COMMAND + command),
                    encoding="utf-8",
                    errors="replace",
                ),
                seconds,
            )
        except TimeoutError as exc:
            await self._drop_connection()
            raise ConnectError(
                self._name,
                f"{self._address} stopped answering (no reply within {seconds:g}s "
                "on an open connection)",
                kind=Kind.TIMEOUT,
            ) from exc

    async def _connection(self) -> asyncssh.SSHClientConnection:
        conn = self._conn
        if conn is not None and not conn.is_closed():
            return conn
        # Callers that come while a connect runs share it and its failure, rather than
        # queueing to repeat it: a silent host costs one connect timeout, not one each.
        return await self._opening.run(self._open_and_hold)

    async def _open_and_hold(self) -> asyncssh.SSHClientConnection:
        self._conn = None
        self._conn = await self._open_connection()
        self.connect_count += 1
        return self._conn

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            with contextlib.suppress(Exception):
                await conn.wait_closed()

    async def _open_connection(self) -> asyncssh.SSHClientConnection:
        resolved = ssh_config.resolve(self._name, self._target, self._options)
        self.resolved = resolved
        jump = None
        if resolved.proxy_jump is not None:
            jump = await self._open_jumps(resolved)
        try:
            return await self._dial(resolved, jump, via=resolved.proxy_jump)
        except BaseException:
            if jump is not None:
                jump.close()
            raise

    async def _open_jumps(self, resolved: ssh_config.ResolvedSSH) -> asyncssh.SSHClientConnection:
        """The ProxyJump hops, each dialled through the one before, each read through the
        SSH config and held to the same host-key policy as the host itself (ssh does the
        same; asyncssh's own ProxyJump would trust ``~/.ssh/known_hosts`` whatever
        SSH_KNOWN_HOSTS says)."""
        assert resolved.proxy_jump is not None
        conn: asyncssh.SSHClientConnection | None = None
        try:
            for hop in ssh_config.jump_hops(self._name, resolved.proxy_jump):
                hop_resolved = ssh_config.resolve(self._name, hop, self._options)
                try:
                    conn = await self._dial(hop_resolved, conn, via=resolved.proxy_jump)
                except SiteConfigError:
                    raise
                except ConnectError as exc:  # a HostKeyError stays one
                    raise type(exc)(
                        self._name,
                        f"cannot reach the ProxyJump host {hop.host} "
                        f"({hop_resolved.address}, from {resolved.config_file}): {exc.reason}",
                        kind=exc.kind,
                    ) from exc
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        assert conn is not None
        return conn

    async def _dial(
        self,
        resolved: ssh_config.ResolvedSSH,
        tunnel: asyncssh.SSHClientConnection | None,
        via: str | None = None,
    ) -> asyncssh.SSHClientConnection:
        import asyncssh

        options = self._options
        seconds = options.connect_timeout
        address = resolved.address
        try:
            known_hosts_path = _known_hosts_path(options)
        except RuntimeError as exc:  # no home directory to expand ~ to
            raise HostKeyError(
                self._name, f"no known hosts file: {exc}; set SSH_KNOWN_HOSTS in topology.env"
            ) from exc
        try:
            verifier = _HostKeyVerifier(known_hosts_path, options.accept_new_host_keys)
        except (OSError, ValueError) as exc:  # unreadable, or not known_hosts syntax
            raise HostKeyError(
                self._name, f"cannot read the known hosts file {known_hosts_path}: {exc}"
            ) from exc
        kwargs: dict[str, Any] = {
            "port": resolved.port,
            "known_hosts": verifier.known,
            "client_factory": verifier.client_factory,
            # bounded by ``within`` below, which counts only the time this process listened
            "connect_timeout": None,
            "keepalive_interval": options.keepalive_interval,
            "keepalive_count_max": options.keepalive_count_max,
            # A GPU host is not trusted with the user's agent, whatever ~/.ssh/config says.
            "agent_forwarding": False,
            # The config's other options (ciphers, agent...) still apply; its ProxyJump is
            # dialled by ``_open_jumps`` (None here: asyncssh must not dial it again).
            "config": [str(resolved.config_file)] if resolved.config_file else [],
            "tunnel": tunnel,
        }
        if resolved.user:
            # asyncssh takes an absent username as "the local user"; None is not that.
            kwargs["username"] = resolved.user
        if resolved.identity_files:
            if options.identity_files:
                for path in options.identity_files:
                    self._check_identity(path)
            kwargs["client_keys"] = [str(path) for path in resolved.identity_files]
        log.debug("connecting to %s (%s, %s)", self._name, resolved.alias, address)
        try:
            # TCP, handshake and authentication within the connect timeout, as asyncssh's
            # own connect_timeout would bound them, but not counting the time this
            # process's loop was held by other work (``listening``)
            conn = await within(asyncssh.connect(resolved.alias, **kwargs), seconds)
        except asyncssh.HostKeyNotVerifiable as exc:
            raise HostKeyError(self._name, verifier.refusal or verifier.why(exc)) from exc
        except asyncssh.PermissionDenied as exc:
            user = resolved.user or "(local user)"
            raise ConnectError(
                self._name,
                f"authentication failed for user {user} at {address}: check that "
                "the identity file's public key is in the remote authorized_keys",
                kind=kind_of(exc),
            ) from exc
        except asyncssh.DisconnectError as exc:
            raise ConnectError(
                self._name, f"connection lost to {address}: {exc.reason}", kind=kind_of(exc)
            ) from exc
        except asyncssh.ChannelOpenError as exc:  # the jump host refused to forward
            raise ConnectError(
                self._name,
                f"the ProxyJump host {via} cannot open {address}: {exc.reason}",
                kind=kind_of(exc),
            ) from exc
        except ConnectionRefusedError as exc:
            raise ConnectError(
                self._name,
                f"connection refused (is sshd running on {address}?)",
                kind=kind_of(exc),
                unreached=unreached_of(exc),
            ) from exc
        except TimeoutError as exc:
            raise ConnectError(
                self._name,
                f"timed out after {seconds:g}s connecting to {address}",
                kind=kind_of(exc),
                unreached=unreached_of(exc),
            ) from exc
        except OSError as exc:  # a name that does not resolve, no route to the address
            reason = exc.strerror or str(exc)
            raise ConnectError(
                self._name, f"{reason} ({address})", kind=kind_of(exc), unreached=unreached_of(exc)
            ) from exc
        if tunnel is not None:
            conn.set_tunnel(tunnel)  # closed with the connection it carries
        verifier.record_accepted_key(resolved.host, resolved.port)
        return conn

    def _check_identity(self, path: Path) -> None:
        """An identity file that is not there is a mistake in topology.env, not a host that
        is down: asyncssh would only say "No such file or directory"."""
        if path.is_file() and os.access(path, os.R_OK):
            return
        why = "is not readable" if path.exists() else "does not exist"
        raise SiteConfigError(
            self._name,
            f"the SSH identity file {path} {why}: SSH_IDENTITY in topology.env names it; "
            "fix the path, or remove SSH_IDENTITY to use the SSH agent and ~/.ssh/id_*",
            variable="SSH_IDENTITY",
        )


class _HostKeyVerifier:
    """Decides on a host key asyncssh could not match against known_hosts, remembering
    why it refused so the error can say what to do."""

    def __init__(self, known_hosts: Path, accept_new: bool) -> None:

        self._path = known_hosts
        self._accept_new = accept_new
        text = known_hosts.read_text() if known_hosts.is_file() else ""
        self.known = _revoked_at_any_port(text)
        self.refusal: str | None = None
        self._accepted: asyncssh.SSHKey | None = None

    def client_factory(self) -> asyncssh.SSHClient:
        import asyncssh

        verifier = self

        class _Client(asyncssh.SSHClient):
            def validate_host_public_key(
                self, host: str, addr: str, port: int, key: asyncssh.SSHKey
            ) -> bool:
                return verifier.decide(host, addr, port, key)

        return _Client()

    def decide(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        """Called only for a key known_hosts does not trust for this host."""
        entry = _known_hosts_name(host, port)
        known_keys = self.known.match(host, addr, port if port != 22 else None)[0]
        if known_keys:
            self.refusal = (
                f"host key for {entry} has changed (now {key.get_fingerprint()}); it may be "
                f"a different machine or someone intercepting the connection. If the change "
                f"is expected, remove the old entry with "
                f"ssh-keygen -R '{entry}' -f {self._path} and connect again"
            )
            return False
        if self._accept_new:
            self._accepted = key
            return True
        self.refusal = (
            f"host key for {entry} is unknown ({key.get_fingerprint()}, not in "
            f"{self._path}); add it with ssh-keyscan -p {port} {host} >> {self._path} "
            f"after checking the fingerprint, or set SSH_ACCEPT_NEW_HOST_KEYS=true to "
            f"accept new hosts on first connect"
        )
        return False

    def why(self, exc: Exception) -> str:
        """What to tell of a key asyncssh refused before asking ``decide``."""
        if "revoked" in str(exc).lower():
            return (
                f"the host key of this host is marked @revoked in {self._path}: it is never "
                "accepted, whatever SSH_ACCEPT_NEW_HOST_KEYS says. Ask the host's owner "
                "which key it should have"
            )
        return str(exc)

    def record_accepted_key(self, host: str, port: int) -> None:
        """Append a newly accepted key to known_hosts (after the connection succeeded)."""
        key = self._accepted
        if key is None:
            return
        entry = _known_hosts_name(host, port)
        algorithm, blob = key.export_public_key("openssh").decode().split()[:2]
        line = f"{entry} {algorithm} {blob}"
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            with self._path.open("a") as out:
                out.write(line + "\n")
        except OSError as exc:  # the connection is fine; the next one asks again
            log.warning("accepted new host key for %s but cannot record it: %s", entry, exc)
            return
        log.warning(
            "accepted new host key for %s (%s) and added it to %s",
            entry,
            key.get_fingerprint(),
            self._path,
        )


def _revoked_at_any_port(text: str) -> asyncssh.SSHKnownHosts:
    """known_hosts as asyncssh reads it, except that a key marked ``@revoked`` for the host
    or its address is revoked on every port. asyncssh looks ``[host]:port`` up first and,
    when it trusts no key there, looks the bare host up instead, keeping only the second
    lookup's revoked keys: a key revoked for ``[host]:2222`` was then simply unknown (and
    accepted with SSH_ACCEPT_NEW_HOST_KEYS=true), and one revoked for ``host`` did not
    count against a key trusted for ``[host]:2222``. asyncssh refuses a revoked key before
    it trusts one or asks ``_HostKeyVerifier.decide``."""
    import asyncssh

    # The @revoked lines alone, as plain entries: their matches are the revoked keys.
    revoked_lines = [
        line.strip()[len("@revoked") :]
        for line in text.splitlines()
        if line.strip().startswith("@revoked") and line.strip()[len("@revoked") :][:1].isspace()
    ]
    revoked = asyncssh.import_known_hosts("\n".join(revoked_lines))

    class Known(asyncssh.SSHKnownHosts):
        def match(self, host: str, addr: str, port: int | None) -> Any:
            found = list(super().match(host, addr, port))
            for lookup in (port, None) if port else (None,):
                keys, _, _, certs, _, subjects, _ = revoked.match(host, addr, lookup)
                found[2] = [*found[2], *keys]
                found[4] = [*found[4], *certs]
                found[6] = [*found[6], *subjects]
            return tuple(found)

    return Known(text)


def _known_hosts_name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def _known_hosts_path(options: SSHOptions) -> Path:
    if options.known_hosts is not None:
        return options.known_hosts
    return Path("~/.ssh/known_hosts").expanduser()


def _exit_status(process: asyncssh.SSHClientProcess[str]) -> int | None:
    """The exit status, with a remote death by signal reported as 128+N like a shell."""
    if process.exit_status is not None and process.exit_status >= 0:
        return process.exit_status
    exit_signal = process.exit_signal
    if exit_signal is not None:
        try:
            return 128 + signal.Signals["SIG" + exit_signal[0]].value
        except KeyError:
            return 255
    return None


class _RemoteCommand:
    """A running remote command and the pid its shell reported (see PID_MARKER_COMMAND)."""

    def __init__(self, process: asyncssh.SSHClientProcess[str]) -> None:
        self.process = process
        self.pid: int | None = None
        self.marker_read = False

    async def read_pid_marker(self) -> str:
        """Consume the marker line from stderr; returns any other text read instead."""
        line = await self.process.stderr.readline()
        self.marker_read = True
        if line.startswith(_PID_PREFIX):
            with contextlib.suppress(ValueError):
                self.pid = int(line[len(_PID_PREFIX) :].strip())
                return ""
        return line
