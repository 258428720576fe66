"""Read a podman site's whole state in one remote command, and parse it. The parser is pure.

The script prints markers (``@@section``, ``@@file``, ``@@rc``...) with the host's text
framed after them (``framing``: every line of it stuffed, so none can fake a marker), which
``parse_site_state`` turns into a ``SiteState``. Only the resource kinds the product uses are
read; an input Secret (a link's client certificate, which setup compares) is read with its
``tls.key`` replaced, and runtime Secrets and Certificates are never read. The link client
certificates are read only by setup (``client_cert_script``).

The state texts a host or the cluster's API answers (a unit's ActiveState, a container's
state, a pod's phase) are read here once, into booleans the deciding module
(``engine/condition.py``) and the rest of the product use.
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import host_json
from ..connectors.shell import program, script
from . import names
from .boot import BootFacts, parse_boot, parse_boot_id
from .certificates import CertificateEnd, certificates_or_error
from .connector_status import ConnectorStatus
from .framing import (
    STDERR,
    Frame,
    safe_path,
    safe_user,
    split_frames,
)
from .logs import podman_message
from .model_endpoint import parse_model_ids
from .private_keys import MAX_LISTED, OpenKey, open_keys
from .resource_yaml import MAX_RESOURCE_CHARS, Parsed, load_resource
from .skupper_version import SkupperVersion, parse_skupper_version
from .unparsed import ParseError, Unparsed, first_line

#: What the host may send of the model endpoint's body, and of each log it is asked for.
MAX_MODELS_BODY = 256 * 1024
MAX_LOG_READ = 256 * 1024


def site_state_script(
    namespace: str,
    model_url: str | None = None,
    log_lines: int = 0,
    known_skupper: str = "",
    more_model_urls: tuple[str, ...] = (),
) -> str:
    """The one command that reads everything about a podman site (``scripts/state.sh``);
    with ``log_lines``, also the last lines of the router's and the controller's container
    logs (for diagnose); with ``more_model_urls``, the host's other model endpoints too, in
    the same round trip (``SiteState.more_models``).

    Everything the host says is framed (``framing``): a command's output, a file, the model
    endpoint's body and the logs are stuffed, so none of it can fake a marker. The output is
    held until the read ends and written in one go (``skmcp_at_once``): one SSH packet per
    32 KiB rather than one per ``echo``.

    Where the host's podman API socket is served, its containers and the router's inspect
    are its answers (one curl) rather than two podman processes; and ``skupper version``
    runs only when the binary's key is not ``known_skupper`` (``KnownSkupper``)."""
    user = "$user"
    return program(
        "state.sh",
        namespace,
        names.router_container(namespace),
        names.router_unit(namespace),
        names.controller_unit(),
        names.PODMAN_SOCKET_UNIT,
        names.legacy_controller_unit(user).removeprefix(user),
        names.controller_container(user).removeprefix(user),
        names.WATCH_SCRIPT_PATH,
        names.VERSION_COMMAND,
        MAX_LISTED,
        max(int(log_lines), 0),
        MAX_LOG_READ,
        model_url or "",
        MAX_MODELS_BODY,
        urllib.parse.quote(names.router_container(namespace), safe=""),
        known_skupper,
        " ".join(more_model_urls),
    )


def client_cert_script(namespace: str, cert_dir: str) -> str:
    """Print a site's link client certificate files (base64), for building links
    (``scripts/client-cert.sh``)."""
    return program("client-cert.sh", namespace, cert_dir)


#: The ActiveState values (``systemctl show``, ``systemctl is-active``) of a unit that runs.
ACTIVE_STATES = ("active", "activating", "reloading")


def is_active(active_state: str | None) -> bool:
    """Whether a unit's ActiveState text says it runs: the one reading of that text."""
    return active_state in ACTIVE_STATES


def pod_running(pod: Any) -> bool:
    """Whether a pod the Kubernetes API returned is in phase ``Running`` (its
    ``status.phase``): the one reading of that text, tolerant of a pod or status that is not
    an object."""
    status = pod.get("status") if isinstance(pod, dict) else None
    return isinstance(status, dict) and status.get("phase") == "Running"


@dataclass(frozen=True)
class ModelsAnswer:
    """What one model endpoint's ``GET /v1/models`` on the host answered: its ids (None: no
    list), else why (curl's exit status and its words)."""

    served_models: list[str] | None = None
    models_error: str | None = None
    models_exit: int | None = None


@dataclass
class UnitState:
    name: str
    load_state: str = "not-found"
    active_state: str = "inactive"
    sub_state: str = "dead"
    result: str = "success"
    n_restarts: int = 0
    unit_file_state: str = ""
    main_pid: int = 0
    exec_main_code: str = ""
    exec_main_status: int = 0

    @property
    def active(self) -> bool:
        return is_active(self.active_state)

    @property
    def loaded(self) -> bool:
        """Whether systemd loaded the unit's file (``LoadState=loaded``)."""
        return self.load_state == "loaded"

    @property
    def installed(self) -> bool:
        """Whether systemd knows the unit at all (its LoadState is not ``not-found``)."""
        return self.load_state != "not-found"

    @property
    def failed(self) -> bool:
        """Whether systemd holds the unit failed (until a start or ``reset-failed``)."""
        return self.active_state == "failed"

    @property
    def start_limit_hit(self) -> bool:
        """Whether systemd refuses to start the unit until its start interval passes (more
        than StartLimitBurst starts in StartLimitIntervalSec: 5 in 10 s by default)."""
        return self.result == "start-limit-hit"


@dataclass
class ContainerState:
    name: str
    state: str  # running | exited | created | ...
    exit_code: int | None = None
    labels: dict[str, str] = field(default_factory=dict)
    started_at: int | None = None  # unix seconds, by the host's clock
    exited_at: int | None = None  # unix seconds, by the host's clock; None if it never exited
    image: str | None = None  # the image it was made from, as podman ps names it

    @property
    def running(self) -> bool:
        return self.state == "running"


@dataclass
class RouterContainer:
    """What the tmpfs workaround needs to know about the router container."""

    has_tmpfs: bool
    has_ssl_base_path: bool
    inspect: dict[str, Any]


@dataclass
class SiteState:
    """Everything one round trip tells about a podman site."""

    user: str = ""
    now: int | None = None  # the host's clock when it was read (unix seconds)
    podman_path: str = ""
    skupper: SkupperVersion = field(default_factory=lambda: SkupperVersion(None, "not read"))
    #: The skupper binary's key (its path and stat) when the host could give one: the
    #: version is read again only when it changes (``KnownSkupper``).
    skupper_key: str | None = None
    #: Whether ``skupper`` is the known version, not run again (the binary is unchanged).
    skupper_reused: bool = False
    units: dict[str, UnitState] = field(default_factory=dict)
    containers: dict[str, ContainerState] = field(default_factory=dict)
    router: RouterContainer | None = None
    input_resources: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    runtime_resources: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    unit_files: dict[str, str] = field(default_factory=dict)
    enabled_at_boot: set[str] = field(default_factory=set)
    watch_script: str | None = None
    login_uid: int | None = None
    open_keys: list[OpenKey] = field(default_factory=list)  # private keys others may read
    rendered: bool = False
    issuer: str | None = None
    certs_private: bool = False
    private_certs: list[str] = field(default_factory=list)
    #: Every certificate of the site with its end, earliest first (``facts/certificates``);
    #: None when its files could not be read (a ``ParseError`` says why)
    certificates: list[CertificateEnd] | None = None
    #: The host's other model endpoints' answers (several per host), in topology order
    #: after the first, whose answer is ``served_models``/``models_error``/``models_exit``.
    more_models: list[ModelsAnswer] = field(default_factory=list)
    served_models: list[str] | None = None
    models_error: str | None = None
    #: curl's exit status asking the model endpoint (None: not asked, or not a number):
    #: ``model_endpoint.CurlExit`` says which ones the product tells apart.
    models_exit: int | None = None
    logs: dict[str, list[str]] = field(default_factory=dict)
    #: Why a component's log could not be read although its container exists (podman logs
    #: printed nothing and the journal had no line of it): no line there is no evidence.
    logs_unavailable: dict[str, str] = field(default_factory=dict)
    #: The router log's lines that hold a string diagnose searched the whole log for (a line
    #: skrouterd writes once, a tail may have lost), by that string, oldest first.
    log_matches: dict[str, list[str]] = field(default_factory=dict)
    #: The router's connectors as its own management reports them (diagnose asks the
    #: dialling router of a failing link): None when not asked or there is no listener.
    connectors: list[ConnectorStatus] | None = None
    #: Why the router's connector status could not be read when asked (skmanage failed or
    #: printed what is not its answer): unknown, never an empty list.
    connectors_error: str | None = None
    #: What each framed command wrote on its standard error, by section (evidence only:
    #: no parser reads it), e.g. libpod's warnings under ``containers``.
    stderr: dict[str, str] = field(default_factory=dict)
    #: The facts whose output could not be parsed: each is unknown, not empty.
    parse_errors: list[ParseError] = field(default_factory=list)
    #: The host's boot: linger, a manager that does not answer, podman's refusal (facts/boot).
    boot: BootFacts = field(default_factory=BootFacts)
    complete: bool = False
    refused: list[str] = field(default_factory=list)  # values the host sent that are not ones

    def models_answer(self, index: int) -> ModelsAnswer:
        """The host's ``GET /v1/models`` answer for its ``index``-th model endpoint (0: the
        first; past the ones read: not asked)."""
        if index == 0:
            return ModelsAnswer(self.served_models, self.models_error, self.models_exit)
        if index - 1 < len(self.more_models):
            return self.more_models[index - 1]
        return ModelsAnswer()

    def unparsed(self, fact: str) -> ParseError | None:
        """Why ``fact`` (``units``, ``containers``, ``router``) is unknown, if it is."""
        return next((e for e in self.parse_errors if e.fact == fact), None)

    def log_known(self, component: str) -> bool:
        """Whether ``component``'s log was read and has lines: only then can a line's
        absence say anything."""
        return bool(self.logs.get(component)) and component not in self.logs_unavailable

    def unit(self, name: str) -> UnitState:
        return self.units.get(name) or UnitState(name)

    def container(self, name: str) -> ContainerState | None:
        return self.containers.get(name)

    def container_running(self, name: str) -> bool:
        c = self.containers.get(name)
        return bool(c and c.running)

    def running_for(self, name: str) -> float | None:
        """Seconds the container has been running (by the host's clock), None if unknown."""
        c = self.containers.get(name)
        if c is None or not c.running or not c.started_at or self.now is None:
            return None
        return float(self.now - c.started_at)

    def stopped_for(self, name: str) -> float | None:
        """Seconds since the container exited (by the host's clock), None if unknown."""
        c = self.containers.get(name)
        if c is None or c.running or not c.exited_at or self.now is None:
            return None
        return float(max(0, self.now - c.exited_at))


def parse_systemctl_show(text: str) -> dict[str, UnitState]:
    """``systemctl show -p ... A B`` prints one block of Key=value lines per unit; text with
    no block that names its unit is ``Unparsed``."""
    result: dict[str, UnitState] = {}
    for block in re.split(r"\n\s*\n", text.strip()):
        props = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        name = props.get("Id")
        if not name:
            continue
        result[name] = UnitState(
            name=name,
            load_state=props.get("LoadState", "not-found"),
            active_state=props.get("ActiveState", "inactive"),
            sub_state=props.get("SubState", "dead"),
            result=props.get("Result", "success"),
            n_restarts=_int(props.get("NRestarts")),
            unit_file_state=props.get("UnitFileState", ""),
            main_pid=_int(props.get("MainPID")),
            exec_main_code=props.get("ExecMainCode", ""),
            exec_main_status=_int(props.get("ExecMainStatus")),
        )
    if text.strip() and not result:
        raise Unparsed("no block of Key=value lines with an Id")
    return result


def podman_ps_script() -> str:
    """Every container of the login user's podman, as JSON (read by ``parse_podman_ps``)."""
    return script("podman ps -a --format json")


def parse_podman_ps(text: str) -> dict[str, ContainerState]:
    """Containers by name from ``podman ps -a --format json`` (no output: none); text that is
    not a JSON list of objects is ``Unparsed``."""
    try:
        rows = host_json.loads(text or "[]")
    except ValueError as exc:
        raise Unparsed(_not_json(exc)) from exc
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise Unparsed("not a JSON list of containers")
    result: dict[str, ContainerState] = {}
    for row in rows:
        names = row.get("Names") or []
        name = names[0] if isinstance(names, list) and names else str(names or "")
        if not name:
            continue
        exit_code = row.get("ExitCode")
        started = row.get("StartedAt")
        exited = row.get("ExitedAt")
        result[name] = ContainerState(
            name=name,
            state=str(row.get("State", "")).lower(),
            exit_code=exit_code if isinstance(exit_code, int) else None,
            labels=dict(row.get("Labels") or {}),
            started_at=started if isinstance(started, int) and started > 0 else None,
            exited_at=exited if isinstance(exited, int) and exited > 0 else None,
            image=str(row["Image"])[:300] if isinstance(row.get("Image"), str) else None,
        )
    return result


def parse_router_inspect(text: str) -> RouterContainer | None:
    """The router container from ``podman inspect`` (an empty list: none); text that is not
    a JSON list of objects is ``Unparsed``."""
    try:
        data = host_json.loads(text)
    except ValueError as exc:
        raise Unparsed(_not_json(exc)) from exc
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise Unparsed("not a JSON list of containers")
    return _router(data[0]) if data else None


def _router(info: dict[str, Any]) -> RouterContainer:
    tmpfs = (info.get("HostConfig") or {}).get("Tmpfs") or {}
    env = (info.get("Config") or {}).get("Env") or []
    return RouterContainer(
        has_tmpfs="/tmp" in tmpfs,
        has_ssl_base_path=any(str(e).startswith("SSL_PROFILE_BASE_PATH=") for e in env),
        inspect=info,
    )


def _not_json(exc: ValueError) -> str:
    """Why a host's text is not the JSON document asked for (too deep, or not JSON)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at line {exc.lineno}"
    return str(exc) if isinstance(exc, host_json.TooDeep) else f"not JSON: {exc}"


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


#: What a site's resource files may hold together: some 20 times a hub's with 32 providers.
MAX_RESOURCES_CHARS = 2 * 1024 * 1024


class _ResourceBudget:
    """The resource files of one read, parsed while the bounds last; a file refused, or one
    past a bound, is named in the state's ``refused`` and not parsed."""

    def __init__(self, state: SiteState, seconds: float | None) -> None:
        self._state = state
        self._left = MAX_RESOURCES_CHARS
        self._seconds = seconds
        self._deadline = None if seconds is None else time.monotonic() + seconds
        self._spent = False

    def parse(self, where: str, text: str) -> dict[str, Any] | None:
        if self._spent:
            return None
        if len(text) > MAX_RESOURCE_CHARS:
            # refused by its own size and never parsed, so it spends none of the bound and
            # is named: counted against it, one 14 MiB file was "resource files holding more
            # than ..." and hid its own name, and every file after it, from the user
            self._refused(where, load_resource(text))
            return None
        self._left -= len(text)
        if self._left < 0:
            self._spend(f"resource files holding more than {MAX_RESOURCES_CHARS} characters")
            return None
        if self._deadline is not None and time.monotonic() > self._deadline:
            self._spend(f"resource files that took more than {self._seconds:g} s to parse")
            return None
        parsed = load_resource(text)
        if parsed.refused:
            self._refused(where, parsed)
            return None
        doc = parsed.doc
        if not (
            isinstance(doc, dict) and doc.get("kind") and isinstance(doc.get("metadata"), dict)
        ):
            return None
        return doc

    def _refused(self, where: str, parsed: Parsed) -> None:
        self._state.refused.append(f"a resource file {where} that is not read: {parsed.refused}")

    def _spend(self, what: str) -> None:
        self._spent = True
        self._state.refused.append(f"{what}, which no site needs; the rest were not read")


def _podman_path(value: str) -> str | None:
    """``value`` if it can be podman as ``command -v`` finds it: a plain absolute path
    (``safe_path``: it goes into unit files and scripts) whose last part is ``podman``."""
    return value if safe_path(value) and value.rsplit("/", 1)[-1] == "podman" else None


#: The markers a read prints once: a second one is a line the host forged, and the read
#: is refused rather than taking either.
_ONCE = frozenset(
    {
        "user",
        "now",
        "boot-id",
        "podman",
        "rendered",
        "issuer",
        "certs-private",
        "end",
        "skupper-key",
        "skupper-known",
    }
)
#: What a line of ``@@certs-private`` holds: a mode and a name made plain on the host.
_PRIVATE_CERT = re.compile(r"[0-7]{1,4} runtime/certs/[A-Za-z0-9._/ +?-]+")
#: The longest skupper binary key a host may send (its path and its stat): a longer one is
#: not kept, so its version is read again at each read.
MAX_SKUPPER_KEY = 512
#: The line ``curl -w`` writes after each answer of the podman API (``scripts/state.sh``).
_API_STATUS = re.compile(r"@http ([0-9]{3})")


@dataclass(frozen=True)
class KnownSkupper:
    """A skupper binary's version as an earlier read found it, by the binary's key (its
    path and its stat, ``scripts/state.sh``): a read that finds the same key does not run
    ``skupper version`` again."""

    key: str
    version: SkupperVersion


def parse_site_state(
    output: str, *, budget: float | None = None, known: KnownSkupper | None = None
) -> SiteState:
    """Turn the script's output into a SiteState. Missing pieces stay at their defaults; a
    value the host sent that is not one (a user name, a podman path, a resource file the
    parser does not take, a marker given twice) is left out and named in ``refused``.

    The resource files are parsed within bounds: each one by ``load_resource``, all of them
    together at most ``MAX_RESOURCES_CHARS``, and, with ``budget``, for at most that many
    seconds (checked between files, so a parse given up on stops working too). ``known`` is
    the skupper version the read was sent with (``site_state_script``'s ``known_skupper``):
    the one the state takes when the host says its binary is still that one."""
    reader = _StateReader(budget)
    for frame in split_frames(output):
        reader.take(frame)
    return reader.finish(known)


def _models_answer(state: SiteState, bodies: dict[str, str], section: str) -> ModelsAnswer:
    if bodies.get(f"{section}:rc") == "0":
        return ModelsAnswer(parse_model_ids(bodies[section]))
    rc = bodies.get(f"{section}:rc", "")
    said = state.stderr.get(section) or bodies[section]
    return ModelsAnswer(
        None,
        said.strip()[-300:] or f"exit {rc}",
        int(rc) if rc.isascii() and rc.isdigit() else None,
    )


class _StateReader:
    """The frames of one read, taken in order (``take``), then made facts (``finish``)."""

    def __init__(self, budget: float | None) -> None:
        self.state = SiteState()
        self.section = ""
        self.bodies: dict[str, str] = {}
        self.seen: set[str] = set()
        self.skupper_known = False
        self.resources = _ResourceBudget(self.state, budget)
        self.cert_files: dict[str, str] = {}
        self.boot_id: str | None = None

    def take(self, frame: Frame) -> None:
        tag = frame.tag
        if tag in _ONCE:
            if tag in self.seen:
                self.state.refused.append(
                    f"a second @@{tag} line ({frame.argument[:80]!r}), which is forged"
                )
                return
            self.seen.add(tag)
        handler = _FRAME_HANDLERS.get(tag)
        if handler is not None:
            handler(self, frame)

    # -- one method per marker (``_FRAME_HANDLERS``) ------------------------------------

    def _user(self, frame: Frame) -> None:
        self.state.user = _checked(self.state, "user name", frame.argument, safe_user)

    def _now(self, frame: Frame) -> None:
        arg = frame.argument
        self.state.now = int(arg) if arg.isascii() and arg.isdigit() else None

    def _boot_id(self, frame: Frame) -> None:
        self.boot_id = parse_boot_id(frame.argument)
        if frame.argument and self.boot_id is None:  # unknown, and said: not a refusal
            self.state.parse_errors.append(
                ParseError(
                    "boot-id",
                    "read < /proc/sys/kernel/random/boot_id",
                    first_line(frame.argument),
                    "not a boot id (a UUID)",
                )
            )

    def _podman(self, frame: Frame) -> None:
        self.state.podman_path = _checked(self.state, "podman path", frame.argument, _podman_path)

    def _section(self, frame: Frame) -> None:
        self.section = frame.argument
        self.bodies[self.section] = frame.body

    def _rc(self, frame: Frame) -> None:
        self.bodies[f"{self.section}:rc"] = frame.argument

    def _stderr(self, frame: Frame) -> None:
        if self.section and frame.body.strip():
            self.state.stderr[self.section] = frame.body.rstrip("\n")

    def _file(self, frame: Frame) -> None:
        kind, _, name = frame.argument.partition(" ")
        if kind in ("input", "runtime"):
            res = self.resources.parse(f"{kind}/resources/{name}", frame.body)
            if res is not None:
                state = self.state
                target = state.input_resources if kind == "input" else state.runtime_resources
                target[(str(res["kind"]), str(res["metadata"].get("name", "")))] = res
        elif kind == "unit":
            self.state.unit_files[name] = frame.body.rstrip("\n") + "\n"
        elif kind == "watch":
            self.state.watch_script = frame.body.rstrip("\n") + "\n"
        elif kind == "cert":
            self.cert_files[name] = frame.body

    def _boot(self, frame: Frame) -> None:
        self.state.enabled_at_boot.add(frame.argument)

    def _keys(self, frame: Frame) -> None:
        arg = frame.argument
        self.state.login_uid = int(arg) if arg.isascii() and arg.isdigit() else None
        self.state.open_keys = open_keys(frame.lines)

    def _rendered(self, frame: Frame) -> None:
        self.state.rendered = True

    def _issuer(self, frame: Frame) -> None:
        self.state.issuer = frame.argument or None

    def _certs_private(self, frame: Frame) -> None:
        self.state.certs_private = True
        self.state.private_certs = [line for line in frame.lines if _PRIVATE_CERT.fullmatch(line)]

    def _end(self, frame: Frame) -> None:
        self.state.complete = True

    def _skupper_key(self, frame: Frame) -> None:
        key = frame.argument
        self.state.skupper_key = key if 0 < len(key) <= MAX_SKUPPER_KEY else None

    def _skupper_known(self, frame: Frame) -> None:
        self.skupper_known = True

    # -- the facts of the sections, once every frame is taken ----------------------------

    def finish(self, known: KnownSkupper | None) -> SiteState:
        state, bodies = self.state, self.bodies
        state.certificates = certificates_or_error(self.cert_files, state.parse_errors)
        state.boot = parse_boot(bodies, state.stderr, self.boot_id)
        self._version(known)
        if bodies.get("units:rc") == "0":
            state.units = _parsed(state, bodies, "units", parse_systemctl_show) or {}
        if "podman-api" in bodies:
            self._podman_api(bodies["podman-api"])
        else:
            if bodies.get("containers:rc") == "0":
                state.containers = _parsed(state, bodies, "containers", parse_podman_ps) or {}
            if bodies.get("router:rc") == "0":
                state.router = _parsed(state, bodies, "router", parse_router_inspect)
        if "models" in bodies:
            self._models()
        for component in ("router", "controller"):
            if bodies.get(f"log-{component}:rc") == "0":
                # joined streams: podman's own warnings (logrus's) are no line of the log
                state.logs[component] = [
                    line
                    for line in bodies[f"log-{component}"].split("\n")
                    if line.strip() and not podman_message(line)
                ]
        return state

    def _version(self, known: KnownSkupper | None) -> None:
        """The skupper version: from its section, or the known one when the host found the
        binary unchanged (a key the read was not sent is refused: the host made it up)."""
        state = self.state
        if self.skupper_known:
            if known is not None and state.skupper_key == known.key:
                state.skupper = known.version
                state.skupper_reused = True
            else:
                state.refused.append(
                    "a skupper binary it called unchanged from one the read did not name"
                )
            return
        version_rc = self.bodies.get("version:rc", "")
        state.skupper = parse_skupper_version(
            self.bodies.get("version", ""), int(version_rc) if version_rc.isdigit() else None
        )

    def _podman_api(self, body: str) -> None:
        """The containers and the router's inspect from the podman API's two answers."""
        state = self.state
        try:
            (listed, listed_status), (router, router_status) = _api_answers(body)
        except Unparsed as exc:
            for fact in ("containers", "router"):
                state.parse_errors.append(
                    ParseError(fact, _API_COMMANDS[fact], first_line(body), str(exc))
                )
            return
        # the script prints the section only for these answers: another is the host's text
        for fact, status, text, ok in (
            ("containers", listed_status, listed, ("200",)),
            ("router", router_status, router, ("200", "404")),
        ):
            if status not in ok:
                state.parse_errors.append(
                    ParseError(fact, _API_COMMANDS[fact], first_line(text), f"HTTP {status}")
                )
        if listed_status == "200":
            state.containers = _parsed_text(state, "containers", listed, parse_podman_ps) or {}
        if router_status == "200":
            state.router = _parsed_text(state, "router", router, parse_router_api)

    def _models(self) -> None:
        """The first model endpoint's answer, then the host's others' (``models-N``)."""
        state, bodies = self.state, self.bodies
        first = _models_answer(state, bodies, "models")
        state.served_models = first.served_models
        state.models_exit = first.models_exit
        state.models_error = first.models_error
        n = 1
        while f"models-{n}" in bodies:
            state.more_models.append(_models_answer(state, bodies, f"models-{n}"))
            n += 1


_FRAME_HANDLERS: dict[str, Callable[[_StateReader, Frame], None]] = {
    "user": _StateReader._user,
    "now": _StateReader._now,
    "boot-id": _StateReader._boot_id,
    "podman": _StateReader._podman,
    "section": _StateReader._section,
    "rc": _StateReader._rc,
    STDERR: _StateReader._stderr,
    "file": _StateReader._file,
    "boot": _StateReader._boot,
    "keys": _StateReader._keys,
    "rendered": _StateReader._rendered,
    "issuer": _StateReader._issuer,
    "certs-private": _StateReader._certs_private,
    "end": _StateReader._end,
    "skupper-key": _StateReader._skupper_key,
    "skupper-known": _StateReader._skupper_known,
}


def _api_answers(body: str) -> list[tuple[str, str]]:
    """The podman API section's two answers, each as (its body, its HTTP status): every
    answer is followed by the line ``@http CODE`` that ``curl -w`` wrote."""
    answers: list[tuple[str, str]] = []
    lines: list[str] = []
    for line in body.split("\n"):
        status = _API_STATUS.fullmatch(line)
        if status is None:
            lines.append(line)
            continue
        answers.append(("\n".join(lines), status.group(1)))
        lines = []
    if len(answers) != 2 or "".join(lines).strip():
        raise Unparsed(f"{len(answers)} answers of the podman API where two were asked")
    return answers


def parse_router_api(text: str) -> RouterContainer | None:
    """The router container from the podman API's ``GET /libpod/containers/NAME/json``:
    the one object ``podman inspect NAME`` lists (both are libpod's ``ctr.Inspect``)."""
    try:
        data = host_json.loads(text)
    except ValueError as exc:
        raise Unparsed(_not_json(exc)) from exc
    if not isinstance(data, dict):
        raise Unparsed("not a JSON object of a container")
    return _router(data)


#: The command each parsed section ran, for a parse error's message.
_SECTION_COMMANDS = {
    "units": "systemctl show",
    "containers": "podman ps -a --format json",
    "router": "podman inspect",
}
#: The podman API requests that stand for those commands (``scripts/state.sh``).
_API_COMMANDS = {
    "containers": "curl --unix-socket podman.sock GET /libpod/containers/json?all=true",
    "router": "curl --unix-socket podman.sock GET /libpod/containers/NAME/json",
}


def _parsed(
    state: SiteState, bodies: dict[str, str], section: str, parse: Callable[[str], Any]
) -> Any:
    """``parse`` of a section's output; when it is ``Unparsed``, None and a ``ParseError``
    that names the command and the first line it printed."""
    text = bodies.get(section, "")
    try:
        return parse(text)
    except Unparsed as exc:
        state.parse_errors.append(
            ParseError(section, _SECTION_COMMANDS[section], first_line(text), str(exc))
        )
        return None


def _parsed_text(state: SiteState, fact: str, text: str, parse: Callable[[str], Any]) -> Any:
    """``parse`` of one answer of the podman API, as ``_parsed`` does a section's."""
    try:
        return parse(text)
    except Unparsed as exc:
        state.parse_errors.append(ParseError(fact, _API_COMMANDS[fact], first_line(text), str(exc)))
        return None


def _checked(state: SiteState, what: str, value: str, check: Callable[[str], str | None]) -> str:
    """``value`` if ``check`` passes it (or it is empty: the host did not say); else ""
    and the refusal noted, so the read fails instead of passing it on to a script."""
    if not value or check(value) is not None:
        return value
    state.refused.append(
        f"a {what} {value[:80]!r}, which is not one (check the SSH user's login and PATH)"
    )
    return ""


def parse_client_cert(output: str) -> dict[str, str]:
    """``{file name: base64}`` from ``client_cert_script``; empty when incomplete."""
    files = {
        frame.argument.removeprefix("cert "): frame.body.strip()
        for frame in split_frames(output)
        if frame.tag == "file" and frame.argument.startswith("cert ")
    }
    return files if all(files.get(k) for k in ("ca.crt", "tls.crt", "tls.key")) else {}
