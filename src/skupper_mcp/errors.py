"""The project's exception tree. Foreign errors (asyncssh, OSError, kubernetes) are
translated into these at the connector seam, with the original kept as ``__cause__``.

    SkupperMcpError
    ├── ConfigError          topology.env or an argument is wrong: nothing was run
    │   └── ConfigErrors     several independent mistakes of one file, all reported at once
    ├── ConnectError         a host could not be reached (refused, timed out, auth, host key)
    │   ├── HostKeyError     the host's key is unknown or has changed
    │   └── SiteConfigError  topology.env names what does not exist (identity file,
    │                        kubeconfig, context): the fix is in the topology, not the host
    ├── CommandError         a remote or local command ran and failed (exit status, stderr tail)
    ├── CommandTimeout       a command did not finish within its timeout
    ├── OutputLimitError     a command sent back more than a read may hold
    ├── Unparsed             a host's text is not what its command prints
    │   └── TooDeep          a host's JSON nests deeper than a parse may go
    ├── SiteStateError       a site's state was read cut short, or lacks what a step needs
    ├── NotReadyError        what an operation waited for did not come within its deadline
    ├── CheckFailed          an end-to-end check of a model route found it broken
    ├── KubeError            the Kubernetes API refused or failed a request
    │   └── KubeBoundError   its answer passed a bound (size, deadline) and was cut off
    ├── LocalStateError      our own files (backups, the operation lock) could not be used
    ├── BusyError            another operation holds the topology's lock
    ├── BackupError          a site's backup is incomplete: nothing may be removed or restored
    └── MissingExtraError    an optional part is needed but its extra is not installed

Every failure the product expects is one of these, so whatever else is raised is a bug and
surfaces as one (``engine.runner.SITE_ERRORS`` catches only ``SkupperMcpError``).

Across that tree, every error has a ``kind`` (``Kind``), the layer that failed, grouped as
httpx groups its own: ``config`` (what we were told is wrong: nothing was tried),
``connect`` (the far end could not be reached: no route, no name, a closed port, a
connection lost), ``timeout`` (it did not answer in time), ``refused`` (it answered and
refused our credentials or its key is not the one we trust: a fix of the credentials, not
of the network), ``parse`` (it answered what cannot be read), ``failed`` (it did what we
asked and said no: a command's exit status, an API's error) and ``local`` (our own files on
this machine). ``kind_of()`` is the one mapping from a foreign exception (asyncssh,
kubernetes and urllib3, httpx, OSError, a JSON parse) to its kind: the connectors build
their errors with it, and every consumer reads ``kind`` rather than an exception's class
or an HTTP status.
"""

from __future__ import annotations

import errno
import json
import re
import socket
import sys
from enum import StrEnum

from .redaction import redact
from .vocabulary import plural

#: How much of a failed command's output an error keeps: its end, where the reason is.
KEPT_OUTPUT = 64 * 1024


class Kind(StrEnum):
    """The layer a failure is of (see the module's docstring): what to fix follows from it."""

    CONFIG = "config"
    CONNECT = "connect"
    TIMEOUT = "timeout"
    REFUSED = "refused"
    PARSE = "parse"
    FAILED = "failed"
    LOCAL = "local"


class Unreached(StrEnum):
    """Why a host that was dialled was not reached, where the socket's error tells (a
    ``ConnectError``'s ``unreached``): each has its own fix. ``name``: the name does not
    resolve on this machine, nothing was dialled (fix the name or the resolver); ``closed``:
    the address answered that nothing listens on the port (start the SSH server, or fix the
    port); ``no-route``: this machine has no route to the address (the host is off its
    network, or down); ``silent``: nothing answered in time (the host is down, or a
    firewall drops the port)."""

    NAME = "name"
    CLOSED = "closed"
    NO_ROUTE = "no-route"
    SILENT = "silent"


#: The socket errors that say no route leads to the address.
_NO_ROUTE_ERRNOS = frozenset({errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN})


def unreached_of(exc: BaseException) -> Unreached | None:
    """The one mapping of a dial's socket error to why the host was not reached; None for
    what says nothing of it (a connection that was made, then lost or refused)."""
    if isinstance(exc, socket.gaierror):
        return Unreached.NAME
    if isinstance(exc, ConnectionRefusedError):
        return Unreached.CLOSED
    if isinstance(exc, TimeoutError):
        return Unreached.SILENT
    if isinstance(exc, OSError) and exc.errno in _NO_ROUTE_ERRNOS:
        return Unreached.NO_ROUTE
    return None


#: The HTTP statuses of a server that answered and refused our credentials.
REFUSED_STATUSES = frozenset({401, 403})


def status_kind(status: object) -> Kind:
    """An HTTP error answer's kind: refused for 401/403, failed for another status."""
    return Kind.REFUSED if status in REFUSED_STATUSES else Kind.FAILED


class SkupperMcpError(Exception):
    """Root of every error this project raises on purpose. ``kind`` is its layer: a class's
    own, or one an instance was given (a ``ConnectError`` that timed out)."""

    kind: Kind = Kind.FAILED


class ConfigError(SkupperMcpError):
    """Bad configuration or arguments. ``location`` is "file:line" when known."""

    kind = Kind.CONFIG

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        variable: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.variable = variable
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        what = f"{variable}: " if variable else ""
        super().__init__(f"{where}{what}{message}")


class ConfigErrors(ConfigError):
    """Every problem found in one file, so one run shows them all. Its message lists each
    problem's own (file:line: variable: what is valid), one a line; ``path``, ``line`` and
    ``variable`` are the first problem's."""

    def __init__(self, problems: list[ConfigError]) -> None:
        self.problems = problems
        first = problems[0]
        self.path, self.line, self.variable = first.path, first.line, first.variable
        listed = "\n".join(str(p) for p in problems)
        where = f" in {first.path}" if first.path else ""
        SkupperMcpError.__init__(self, f"{listed}\n({plural(len(problems), 'problem')}{where})")


class ConnectError(SkupperMcpError):
    """A host could not be used: not reached (``kind`` connect), no answer in time
    (timeout), or it answered and refused our credentials (refused). Give ``kind`` from
    ``kind_of(the foreign exception)``; a subclass has its own. ``unreached`` says why a
    dial reached nothing (``unreached_of(the socket's error)``), None when it does not
    apply or is not known."""

    kind = Kind.CONNECT

    def __init__(
        self,
        host: str,
        reason: str,
        *,
        kind: Kind | None = None,
        unreached: Unreached | None = None,
    ) -> None:
        self.host = host
        self.reason = reason
        self.unreached = unreached
        if kind is not None:
            self.kind = kind
        super().__init__(f"cannot connect to {host}: {reason}")


class HostKeyError(ConnectError):
    """The host key is not trusted (unknown, or different from known_hosts): the host
    answered, and is not the one known_hosts trusts."""

    kind = Kind.REFUSED


class SiteConfigError(ConnectError):
    """A site cannot be used as topology.env describes it: a file it names (SSH_IDENTITY,
    CRC_KUBECONFIG) does not exist or cannot be read, or the kubeconfig has no such context
    (CRC_CONTEXT). Nothing was tried on the host; ``variable`` is the one to fix. A
    ``ConnectError``, so the site is skipped like one that cannot be reached."""

    kind = Kind.CONFIG

    def __init__(self, host: str, reason: str, *, variable: str) -> None:
        self.variable = variable
        super().__init__(host, reason)


class CommandError(SkupperMcpError):
    """A command exited non-zero. Its output is the host's, so what the error keeps of it
    (``stderr``, ``stdout``, the tail in its message) is redacted here, once for every
    caller."""

    def __init__(
        self,
        host: str,
        command: str,
        exit_status: int | None,
        stderr: str,
        stdout: str = "",
        *,
        summary: str | None = None,
    ) -> None:
        self.host = host
        self.command = command
        self.exit_status = exit_status
        self.stderr = redacted_output(stderr)
        self.stdout = redacted_output(stdout)
        tail = stderr_tail(failure_text(self.stderr, self.stdout))
        summary = summary or cut(command, 80)
        detail = f": {tail}" if tail else ""
        super().__init__(f"command failed on {host} (exit {exit_status}): {summary}{detail}")


class CommandTimeout(SkupperMcpError):
    """A command did not finish in time."""

    kind = Kind.TIMEOUT

    def __init__(
        self, host: str, command: str, seconds: float, *, summary: str | None = None
    ) -> None:
        self.host = host
        self.command = command
        self.seconds = seconds
        summary = summary or cut(command, 80)
        super().__init__(f"command timed out on {host} after {seconds:g}s: {summary}")


class OutputLimitError(SkupperMcpError):
    """A command's output passed what the client reads of it: the command was ended and
    what it sent is not used (a host cannot fill this machine's memory)."""

    kind = Kind.PARSE

    def __init__(self, host: str, summary: str, stream: str, limit: int) -> None:
        self.host = host
        self.stream = stream
        self.limit = limit
        super().__init__(
            f"{host} sent more than {limit // 1024} KiB on {stream} for: {summary}; the"
            " command was ended and its output not used"
        )


class SiteStateError(SkupperMcpError):
    """A site's state could not be read whole (the host went away mid-read), or it lacks
    what a step needs (a container, a client certificate). The message may quote the
    host's output, so it is redacted, and so is ``stderr``."""

    kind = Kind.PARSE

    def __init__(
        self,
        host: str,
        message: str,
        *,
        command: str | None = None,
        exit_status: int | None = None,
        stderr: str = "",
    ) -> None:
        self.host = host
        self.command = command
        self.exit_status = exit_status
        self.stderr = redacted_output(stderr)
        super().__init__(redact(message)[0])


class UserManagerDown(SiteStateError):
    """``systemctl`` on the host could not reach the login's systemd manager ("Failed to
    connect to bus"): the site's units can be neither read nor started. ``lingers`` is
    whether the user lingers (None: not known), ``boot_id`` the host's boot id as the read
    found it (None: not known), ``unhandled_reboot`` podman's refusal after a reboot it did
    not see when podman refused too (a user without a manager has no ``/run/user/UID``, so
    podman keeps its files under ``/tmp``); the message says the fix."""

    def __init__(
        self,
        host: str,
        user: str,
        said: str,
        lingers: bool | None,
        boot_id: str | None = None,
        unhandled_reboot: str | None = None,
    ) -> None:
        self.user = user
        self.said = said
        self.lingers = lingers
        self.boot_id = boot_id
        self.unhandled_reboot = unhandled_reboot
        who = user or "the SSH user"
        if lingers is False:
            why = (
                f"{who} does not linger (Linger=no), so its manager runs only while a login "
                "session holds it and starts nothing after a reboot. Fix: run `loginctl "
                f"enable-linger {who}` on {host} as root (or where polkit allows it): the "
                "manager then starts, and with it the units setup enabled"
            )
        elif user == "root":
            # root's Skupper runs under the system manager: no bus there is no systemd
            why = (
                f"{host} runs no systemd (PID 1 is another program, as in a container), "
                "and Skupper's system sites run as systemd units. Fix: run the site on a "
                "host booted with systemd"
            )
        else:
            why = (
                f"its user manager (systemd --user) is not running for {who}. Fix: log in "
                f"to {host} as {who} or run `loginctl enable-linger {who}` there as root "
                "(or where polkit allows it), then run up"
            )
        if unhandled_reboot is not None:
            why += (
                f". podman refuses to run too, after a reboot it did not handle "
                f"({unhandled_reboot}): as {who}, delete the two directories it names"
            )
        super().__init__(
            host,
            f"systemctl cannot reach {who}'s systemd manager ({said}): nothing of "
            f"Skupper's can start or be read there; {why}",
        )


class Unparsed(SkupperMcpError):
    """A parser was given text that is not what its command prints; ``str`` says why. The
    reader that ran the command keeps it as a ``facts.unparsed.ParseError`` of that fact."""

    kind = Kind.PARSE


class TooDeep(Unparsed, ValueError):
    """A host's JSON nests deeper than a parse of host text may go (``host_json``): refused
    before it is parsed. A ``ValueError`` too, as any text that is not JSON is to its
    callers."""

    def __init__(self, found: int, limit: int) -> None:
        self.found = found
        self.limit = limit
        super().__init__(f"it nests {found} levels deep, more than the {limit} a host's JSON may")


class NotReadyError(SkupperMcpError):
    """What an operation waited for (links, a router) was not ready by its deadline."""

    kind = Kind.TIMEOUT

    def __init__(self, host: str, message: str, seconds: float) -> None:
        self.host = host
        self.seconds = seconds
        super().__init__(message)


class CheckFailed(SkupperMcpError):
    """An end-to-end check found the model route broken: a port that does not accept, an
    HTTP error, an answer of the wrong shape, a container that does not run."""

    def __init__(
        self,
        message: str,
        *,
        host: str | None = None,
        status: int | None = None,
        kind: Kind | None = None,
    ):
        self.host = host
        self.status = status
        self.kind = kind or status_kind(status)
        super().__init__(message)


class LocalStateError(SkupperMcpError):
    """A file of our own state on this machine (a backup, the operation lock) could not be
    read or written."""

    kind = Kind.LOCAL

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


#: How much of a Kubernetes API error's reason is kept: the API's message is the server's
#: text, of any length.
KUBE_REASON_CHARS = 1000


class KubeError(SkupperMcpError):
    """A Kubernetes API call failed. ``reason`` is cut to ``KUBE_REASON_CHARS``, saying so."""

    def __init__(
        self, context: str, reason: str, status: int | None = None, *, kind: Kind | None = None
    ) -> None:
        if len(reason) > KUBE_REASON_CHARS:
            cut = len(reason) - KUBE_REASON_CHARS
            reason = f"{reason[:KUBE_REASON_CHARS]}... ({cut} more characters cut)"
        self.context = context
        self.reason = reason
        self.status = status
        self.kind = kind or status_kind(status)
        super().__init__(f"Kubernetes API ({context}): {reason}")


class KubeBoundError(KubeError):
    """A Kubernetes API answer passed a bound and was cut off: ``bound`` is ``size`` (it
    held more than a read may), ``deadline`` (it did not end in time, trickling or not) or
    ``depth`` (it nested deeper than a host's JSON may, ``host_json.MAX_DEPTH``)."""

    def __init__(self, context: str, reason: str, *, bound: str) -> None:
        self.bound = bound
        super().__init__(context, reason, kind=Kind.TIMEOUT if bound == "deadline" else Kind.PARSE)


class BusyError(SkupperMcpError):
    """Another operation on the same topology is running."""

    kind = Kind.LOCAL


# What the skupper CLI writes on stderr without failing: log/slog records ("2025/01/02
# 15:04:05 WARN certificate will not be overwritten path=...", every reload) and 2.1.x's
# Docker notice. Its errors go to stdout (utils/handle_error.go@2.1.2: fmt.Println(err)).
_NOISE = re.compile(
    r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARN) |Warning: Docker is not installed)"
)


def redacted_output(text: str) -> str:
    """The end of a command's output (``KEPT_OUTPUT`` characters) with its secrets taken
    out: a key cut at the top still goes, since the redactor takes an END line's body."""
    return redact(text[-KEPT_OUTPUT:])[0]


def failure_text(stderr: str, stdout: str) -> str:
    """The output that says why a command failed: stderr without the skupper CLI's warnings,
    or stdout when nothing else is left (skupper prints its errors there)."""
    meaningful = [line for line in stderr.splitlines() if line.strip() and not _NOISE.match(line)]
    return "\n".join(meaningful) if meaningful else stdout


def cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and ``...`` in
    ``limit`` characters: the one way a message shortens what it quotes."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def stderr_tail(text: str, lines: int = 3, limit: int = 400) -> str:
    """The last few non-empty lines of a command's output, for error messages."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    tail = " | ".join(kept)
    return tail if len(tail) <= limit else "..." + tail[-limit:]


class BackupError(SkupperMcpError):
    """A backup that does not hold everything it must; ``missing`` names what it lacks."""

    kind = Kind.LOCAL

    def __init__(self, host: str, message: str, missing: list[str]) -> None:
        self.host = host
        self.missing = missing
        super().__init__(f"{host}: {message}")


class MissingExtraError(SkupperMcpError):
    """A site needs an optional part of skupper-mcp whose package is not installed (the
    Kubernetes client for a Kubernetes site); the message names the extra that brings it."""

    kind = Kind.CONFIG

    def __init__(self, needed_by: str, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{needed_by} needs the Python package {package}, which is not installed: "
            f"{install_hint(package, extra)}"
        )


def install_hint(package: str, extra: str) -> str:
    """How to add an extra to skupper-mcp, for each way it may have been installed: the
    pip form does nothing for a pipx or uv tool install, whose own environments only their
    own commands change."""
    return (
        f"add it where skupper-mcp runs: pip install 'skupper-mcp[{extra}]' (pip), "
        f"pipx inject skupper-mcp {package} (pipx), or "
        f"uv tool install --with {package} skupper-mcp (uv tool)"
    )


class PullFailed(SkupperMcpError):
    """Skupper's images could not be pulled on a host (refused, or not within setup's pull
    deadline): that host's failure, with the image, the registry and what to do."""

    def __init__(self, host: str, message: str) -> None:
        self.host = host
        super().__init__(message)


def _foreign(module: str, *names: str) -> tuple[type[BaseException], ...]:
    """The exception classes ``names`` of ``module`` when it is imported (an exception of a
    module never imported cannot be at hand): the mapping imports none of the clients, so
    an install without the Kubernetes extra, or a run that never used SSH, pays nothing."""
    loaded = sys.modules.get(module)
    found = (getattr(loaded, name, None) for name in names) if loaded else ()
    return tuple(c for c in found if isinstance(c, type) and issubclass(c, BaseException))


#: The kinds of the clients' own exceptions, the first class that matches deciding (a
#: subclass before its base): module, class names, kind.
_CLIENT_KINDS: tuple[tuple[str, tuple[str, ...], Kind], ...] = (
    ("asyncssh", ("PermissionDenied", "HostKeyNotVerifiable"), Kind.REFUSED),
    ("asyncssh", ("ConfigParseError",), Kind.CONFIG),
    ("asyncssh", ("Error",), Kind.CONNECT),  # disconnects, channels that would not open
    ("kubernetes.config.config_exception", ("ConfigException",), Kind.CONFIG),
    # a ConnectTimeoutError too, by urllib3's own tree: a refused connection all the same
    ("urllib3.exceptions", ("NewConnectionError",), Kind.CONNECT),
    ("urllib3.exceptions", ("TimeoutError",), Kind.TIMEOUT),
    ("urllib3.exceptions", ("DecodeError",), Kind.PARSE),
    ("urllib3.exceptions", ("HTTPError",), Kind.CONNECT),
    ("httpx", ("TimeoutException",), Kind.TIMEOUT),
    ("httpx", ("DecodingError", "TooManyRedirects"), Kind.PARSE),
    ("httpx", ("InvalidURL", "UnsupportedProtocol"), Kind.CONFIG),
    ("httpx", ("TransportError", "StreamError"), Kind.CONNECT),
)


def _client_kind(exc: BaseException) -> Kind | None:
    """The kind of an asyncssh, kubernetes/urllib3 or httpx exception; None for another.
    An answer with an HTTP status is judged by it; urllib3's retries by what ended them."""
    if isinstance(exc, _foreign("kubernetes.client.exceptions", "ApiException")):
        return status_kind(getattr(exc, "status", None))
    if isinstance(exc, _foreign("httpx", "HTTPStatusError")):
        return status_kind(getattr(getattr(exc, "response", None), "status_code", None))
    if isinstance(exc, _foreign("urllib3.exceptions", "MaxRetryError")):
        reason = getattr(exc, "reason", None)
        return kind_of(reason) if isinstance(reason, BaseException) else Kind.CONNECT
    for module, names, kind in _CLIENT_KINDS:
        if isinstance(exc, _foreign(module, *names)):
            return kind
    return None


def kind_of(exc: BaseException) -> Kind | None:
    """The layer ``exc`` failed in: its own ``kind`` for the product's errors, else the
    one mapping of a foreign exception (asyncssh, kubernetes and urllib3, httpx, OSError,
    a JSON or text decode); None for what none of them is (a bug, not a failure the
    product expects)."""
    if isinstance(exc, SkupperMcpError):
        return exc.kind
    client = _client_kind(exc)
    if client is not None:
        return client
    if isinstance(exc, TimeoutError):  # socket.timeout and asyncio's are this one
        return Kind.TIMEOUT
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError, RecursionError)):
        return Kind.PARSE
    if isinstance(exc, OSError):
        # A socket's error (refused, reset, no route, a name that does not resolve) names no
        # file; one of a file on this machine does.
        return Kind.LOCAL if exc.filename and not isinstance(exc, ConnectionError) else Kind.CONNECT
    return None
