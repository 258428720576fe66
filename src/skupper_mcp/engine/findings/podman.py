"""Rules about a podman host's router, its units and its model: the known failures that
show on one host, matched on what the real router, podman and systemd report."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import UserManagerDown
from ...facts import names
from ...facts.model_endpoint import CurlExit
from ...facts.private_keys import KEYS_CAUSE, KEYS_FIX
from ...facts.site_state import SiteState
from ...results import Finding, UnparsedOutput
from ...sites import units
from ...topology import ModelEndpoint
from ...vocabulary import LOCAL_HOST
from ..condition import podman_condition
from ..model_actions import active_or_default
from ..predicates import podman_router_running, router_unit_active, stopped_as_asked
from ..readings import PodmanReading, Unread
from ..scope import SiteRef
from .context import Network, call, finding, log_lines, model_ctl, on_host, set_variable

# What the router image's launch.sh and skrouterd print (skupper-router 3.4.x: the shell's
# redirection error, then the default config's standalone start; a sslProfile file that
# cannot be loaded stops the router at start-up, src/tls/tls_amqp.c).
TMP_DENIED = "/tmp/skrouterd.json"
STANDALONE = "Router started in Standalone mode"
TLS_CONFIG_FAILED = "Failed to configure TLS"
UNEXPANDED_BASE_PATH = "${SSL_PROFILE_BASE_PATH}"
# systemd's ExecMainCode for a main process that exited (CLD_EXITED), and the exit status a
# shell reports for a SIGTERM it did not survive (128 + 15).
CLD_EXITED = 1
SIGTERM_EXIT = 143


def _router(network: Network, ref: SiteRef) -> str:
    return names.router_container(network.namespace(ref.host))


def tmp_not_writable(network: Network) -> Iterator[Finding]:
    for ref, state in network.podman_sites():
        if state.router is None or state.router.has_tmpfs:
            continue
        denied = [
            line
            for line in log_lines(state, "router", TMP_DENIED, limit=10)
            if "Permission denied" in line or "Read-only" in line
        ]
        if not denied:
            continue
        p = network.provider(ref.host)
        steps = []
        if p is not None:
            steps.append(set_variable(network, f"{p.prefix}_TMPFS_WORKAROUND", "true", ""))
        steps.append(call("setup"))
        yield finding(
            "tmp-not-writable",
            ref,
            "error",
            symptom=f"the router on {ref.host} runs without the site's configuration "
            "(standalone: no link listener, no links)",
            evidence=[
                *denied[-2:],
                *log_lines(state, "router", STANDALONE, limit=1),
                f"{_router(network, ref)}: no tmpfs on /tmp",
            ],
            cause="the router container cannot write /tmp/skrouterd.json (rootless podman's "
            "uid mapping on this host, as on bootc hosts), so launch.sh falls back to the "
            "image's default configuration",
            fix=(
                f"set {p.prefix}_TMPFS_WORKAROUND=true in {network.topology_file}, then run "
                "setup: it re-creates the router with a tmpfs /tmp"
                if p is not None
                else "the local site cannot take the tmpfs workaround; make /tmp writable for "
                "rootless podman on this machine"
            ),
            next=steps,
        )


def certs_not_readable(network: Network) -> Iterator[Finding]:
    for ref, state in network.podman_sites():
        # 0640 files are fine for a router that runs as their owner (Skupper's own
        # container, --user with --userns=keep-id): only the router's refusal counts.
        refused = log_lines(state, "router", TLS_CONFIG_FAILED, limit=2)
        if not state.certs_private or state.router is None or not refused:
            continue
        if any(UNEXPANDED_BASE_PATH in line for line in refused):
            continue  # ssl-profile-base-path
        yield finding(
            "certs-not-readable",
            ref,
            "error",
            symptom=f"the router on {ref.host} cannot load its certificates",
            evidence=[*refused, *(f"mode {line}" for line in state.private_certs)],
            cause="skupper writes the certificates 0640 on every system start or reload, and "
            "this router runs as another uid in its container (a router container created "
            "by hand without --user, as the tmpfs workaround of older scripts did)",
            fix="run setup: it re-creates the router as skupper renders it (--user with "
            "--userns=keep-id), which reads its certificates as their owner",
            next=[call("setup")],
        )


def private_key_readable(network: Network) -> Iterator[Finding]:
    for ref, state in network.podman_sites():
        if not state.open_keys:
            continue
        yield finding(
            "private-key-readable",
            ref,
            "warning",
            symptom=f"private keys of the site on {ref.host} can be read by other users "
            "of the host",
            evidence=[str(key) for key in state.open_keys[:5]],
            cause=KEYS_CAUSE,
            fix=KEYS_FIX,
            next=[call("setup")],
        )


def ssl_profile_base_path(network: Network) -> Iterator[Finding]:
    for ref, state in network.podman_sites():
        if state.router is None or state.router.has_ssl_base_path:
            continue
        yield finding(
            "ssl-profile-base-path",
            ref,
            "error",
            symptom=f"the router on {ref.host} cannot find its certificates",
            evidence=[
                f"{_router(network, ref)}: no SSL_PROFILE_BASE_PATH in its environment",
                *log_lines(state, "router", UNEXPANDED_BASE_PATH, TLS_CONFIG_FAILED, limit=2),
            ],
            cause="the router container was created by hand without "
            "-e SSL_PROFILE_BASE_PATH=/etc/skupper-router, so the sslProfile paths of its "
            "configuration do not resolve",
            fix="run setup: it re-creates the router container as skupper renders it",
            next=[call("setup")],
        )


def no_auto_restart(network: Network) -> Iterator[Finding]:
    for ref, state in network.podman_sites():
        if not state.rendered:
            continue
        ns = network.namespace(ref.host)
        podman = state.podman_path or "podman"
        evidence = []
        for wanted in units.site_units(ns, state.user, podman):
            have = state.unit_files.get(wanted.name)
            if have is None:
                evidence.append(f"{wanted.name}: not installed")
            elif have != wanted.content:
                how = "Skupper's own unit" if "start-watch.sh" not in have else "an older unit"
                evidence.append(f"{wanted.name}: {how}, not the auto-restart unit setup writes")
        if state.watch_script is not None and state.watch_script != units.watch_script(podman):
            evidence.append(f"~/{names.WATCH_SCRIPT_PATH}: differs from what setup writes")
        elif state.watch_script is None:
            evidence.append(f"~/{names.WATCH_SCRIPT_PATH}: missing")
        router = names.router_container(ns)
        unit = state.unit(names.router_unit(ns))
        view = network.podman_reading(ref.host)
        if view is not None and podman_router_running(view) and not router_unit_active(view):
            evidence.append(
                f"{router} is running while {unit.name} is {unit.active_state}: a crash "
                "would not be restarted"
            )
        if not evidence:
            continue
        yield finding(
            "no-auto-restart",
            ref,
            "error",
            symptom=f"a crashed router or controller on {ref.host} would stay down",
            evidence=evidence,
            cause="Skupper's own units start the containers and forget them "
            "(RemainAfterExit=yes); skupper system start/install or a container started by "
            "hand bypasses the units setup writes",
            fix="run setup: it writes the auto-restart units (start-watch.sh, "
            "Restart=on-failure) and starts the router through them",
            next=[call("setup")],
        )


def autostart_at_boot(network: Network) -> Iterator[Finding]:
    """A unit that starts at boot when it should not: Skupper's own fire-and-forget unit
    (``system start``/``install`` enable theirs), or any of the site's units after a
    ``down``, which asked the site to stay stopped."""
    for view in network.podman_readings():
        ref, state = view.ref, view.state
        podman = state.podman_path or "podman"
        ours = {w.content for w in units.site_units(view.namespace, state.user, podman)}
        stopped = stopped_as_asked(view.asked)
        enabled = sorted(
            name
            for name in state.enabled_at_boot
            if stopped or state.unit_files.get(name) not in ours
        )
        if not enabled:
            continue
        cause = (
            f"the last thing asked of {ref.host} was {view.asked}, yet its units are enabled "
            "at boot (enabled by hand, or by skupper system start/install)"
            if stopped
            else "skupper system start and system install enable their own units at boot "
            "(WantedBy=default.target): they start the containers and forget them"
        )
        yield finding(
            "autostart-at-boot",
            ref,
            "warning",
            symptom=f"Skupper on {ref.host} starts by itself at boot"
            + (" though it was stopped as asked" if stopped else " under Skupper's own units"),
            evidence=[f"default.target.wants/{name}" for name in enabled],
            cause=cause,
            fix="run down again: it disables the units"
            if stopped
            else "run setup: it writes the auto-restart units and enables those",
            next=[call("down" if stopped else "setup")],
        )


def linger_off(network: Network) -> Iterator[Finding]:
    """A non-root login user that does not linger: its manager, and so every unit of the
    site, starts only with a login session; after a reboot the site stays down."""
    for view in network.podman_readings():
        ref, state = view.ref, view.state
        if state.boot.linger is not False:
            continue
        user = state.user or "the SSH user"
        yield finding(
            "linger-off",
            ref,
            "warning",
            symptom=f"Skupper on {ref.host} does not come back by itself after a reboot",
            evidence=[f"Linger=no for {user} (no /var/lib/systemd/linger/{user})"],
            cause=f"{user}'s systemd manager runs only while a login session holds it: "
            "after a reboot none of its units start, enabled or not (Skupper itself warns: "
            "'It is recommended to enable lingering')",
            fix=f"run `loginctl enable-linger {user}` on {ref.host}: it needs root (sudo) or "
            "polkit's consent; the manager then starts at once and at every boot",
            next=[on_host(ref.host, f"sudo loginctl enable-linger {user}")],
        )


def podman_unhandled_reboot(network: Network) -> Iterator[Finding]:
    """podman 5.1+ refusing every command after a reboot it did not see (its run root and
    tmp dir survived the boot: not on tmpfs, or not cleaned)."""
    for view in network.views.values():
        match view:
            case PodmanReading(state=state):
                said, user, lingers = state.boot.unhandled_reboot, state.user, state.boot.linger
            case Unread(error=UserManagerDown() as down):  # no manager: read that far
                said, user, lingers = down.unhandled_reboot, down.user, down.lingers
            case _:
                continue
        if said is None:
            continue
        ref, user = view.ref, user or "the SSH user"
        again = (
            f"; {user} does not linger, so its runtime dir is not there at boot and podman "
            "keeps its files under /tmp instead: the refusal comes back after the next reboot "
            f"until `loginctl enable-linger {user}` is run on the host as root (or where "
            "polkit allows it)"
            if lingers is False
            else ""
        )
        yield finding(
            "podman-unhandled-reboot",
            ref,
            "error",
            symptom=f"podman on {ref.host} refuses to run after a reboot",
            evidence=[f"podman ps: {said}"],
            cause="podman keeps the boot id in its alive file; after a reboot that did not "
            "empty its run root and tmp dir (not on tmpfs) the ids differ and podman 5.1+ "
            "stops (libpod checkBootID)",
            fix="as the SSH user, delete the two directories podman names, then run up" + again,
            next=[call("up")],
        )


def unit_failed_on_stop(network: Network) -> Iterator[Finding]:
    for ref, state in network.podman_sites():
        for unit in state.units.values():
            stopped_by_sigterm = (
                unit.exec_main_code == str(CLD_EXITED) and unit.exec_main_status == SIGTERM_EXIT
            )
            if not unit.failed or not stopped_by_sigterm:
                continue
            yield finding(
                "unit-failed-on-stop",
                ref,
                "warning",
                symptom=f"{unit.name} on {ref.host} is 'failed' after a stop",
                evidence=[
                    f"{unit.name}: ActiveState={unit.active_state} Result={unit.result} "
                    f"ExecMainStatus={unit.exec_main_status}"
                ],
                cause="the unit's main process exited 143 (128 + SIGTERM) when stopped, and "
                "the unit does not count 143 as success (SuccessExitStatus=143)",
                fix="run setup: it writes the units with SuccessExitStatus=143 and clears the "
                "failed state",
                next=[call("setup")],
            )


def stale_status(network: Network) -> Iterator[Finding]:
    for view in network.podman_readings():
        if podman_condition(view)[0] != "stale":
            continue
        ref, state = view.ref, view.state
        router = names.router_container(view.namespace)
        controller = state.unit(names.controller_unit())
        found = state.container(router)
        yield finding(
            "stale-status",
            ref,
            "warning",
            symptom=f"{ref.site}'s status says Ready, but its router is not running",
            evidence=[
                "runtime/resources Site status: Ready",
                f"{router}: {found.state if found else 'absent'}",
                f"{controller.name}: {controller.active_state}",
                f"last asked of {ref.host}: {view.asked or 'nothing recorded'}",
            ],
            cause="the router stopped without a down asking for it, and the system "
            "controller, which would update the status, is stopped too; the files keep the "
            "last status it wrote",
            fix=f"run up on {ref.host} to start the controller and the router",
            next=[call("up", target=ref.host)],
        )


def model_not_serving(network: Network) -> Iterator[Finding]:
    """A provider's model endpoint (each of a host's several) whose router runs but which,
    asked on the host, answered no model list. Told apart, each with its own id and next
    step: the server answers but refuses the key (``model-key-refused``), its container is
    stopped (``model-container-stopped``), nothing listens on the model port
    (``model-port-closed``); anything else is ``model-not-serving``. A server that lists
    its models through the listener with the key serves: the host's probe has no key."""
    for ref, state in network.podman_sites():
        provider = network.provider(ref.host)
        if provider is None or ref.host == LOCAL_HOST:
            continue
        view = network.podman_reading(ref.host)
        if view is None or not podman_router_running(view):
            continue
        for p in provider.endpoints:
            yield from _endpoint_not_serving(network, ref, state, p)


def _endpoint_not_serving(
    network: Network, ref: SiteRef, state: SiteState, p: ModelEndpoint
) -> Iterator[Finding]:
    answer = state.models_answer(p.index)
    if answer.served_models is not None:
        return
    probe = network.model_probes.get(p.label)
    if probe is not None and probe.ids is not None:
        return
    asked = (
        f"GET http://{p.model_host}:{p.model_port}/v1/models on {p.host}: "
        f"{answer.models_error or 'no model list'}"
    )
    through = (
        [f"GET /v1/models through the local listener :{p.local_port}: {probe.error}"]
        if probe is not None and probe.error
        else []
    )
    if probe is not None and probe.refused:
        yield _key_refused(network, ref, p, [*through, asked])
        return
    container = state.container(p.model_container) if p.model_container else None
    profile, _ = active_or_default(network.topology, p.label, None)
    if p.model_container and (container is None or not container.running):
        steps = [model_ctl("start", profile, p.host)]
        if container is None:
            steps.insert(0, model_ctl("setup", profile, p.host))
        yield finding(
            "model-container-stopped",
            ref,
            "error",
            symptom=f"the route to {p.label} ends at its router: its model container "
            f"{p.model_container} is {container.state if container else 'absent'}",
            evidence=[
                asked,
                f"{p.model_container}: {container.state if container else 'absent'}",
            ],
            cause="the model container is stopped (or never started) on the provider",
            fix=f"start profile {profile} with hosted-model-ctl, then test_model",
            next=[*steps, call("test_model", target=profile)],
        )
        return
    seen = (
        f"{p.model_container}: {container.state}"
        if p.model_container and container is not None
        else f"{p.label} declares no model container (MODEL_CONTAINER empty)"
    )
    if answer.models_exit == CurlExit.COULDNT_CONNECT:
        yield finding(
            "model-port-closed",
            ref,
            "error",
            symptom=f"nothing listens on {p.model_host}:{p.model_port} on {p.host}, where "
            f"the connector of {p.label} sends the model's traffic",
            evidence=[asked, seen, *through],
            cause="the model server is not running, or listens on another address or "
            f"port than {p.prefix}_MODEL_HOST:{p.prefix}_MODEL_PORT say",
            fix=f"start the model server on {p.host}, or set {p.prefix}_MODEL_PORT (and "
            f"{p.prefix}_MODEL_HOST) to where it listens and run setup; then test_model",
            next=[
                on_host(p.host, f"ss -ltnp | grep -w {p.model_port}"),
                set_variable(
                    network, f"{p.prefix}_MODEL_PORT", None, "the port the server listens on"
                ),
                call("test_model", target=profile),
            ],
        )
        return
    yield finding(
        "model-not-serving",
        ref,
        "error",
        symptom=f"the route to {p.label} ends at its router: {p.model_host}:"
        f"{p.model_port} answers no model list",
        evidence=[asked, seen, *through],
        cause="the model server is stopped, still loading, or answers something else "
        "than an OpenAI model list",
        fix=f"start profile {profile} with hosted-model-ctl, then test_model",
        next=[model_ctl("start", profile, p.host), call("test_model", target=profile)],
    )


def read_unparsed(network: Network) -> Iterator[Finding]:
    """A site whose read printed what its parser could not read: those facts are unknown,
    and so is the site; nothing about them is guessed (no rule reads an unparsed fact)."""
    for ref, state in network.podman_sites():
        if not state.parse_errors:
            continue
        failed = state.parse_errors
        yield finding(
            "read-unparsed",
            ref,
            "warning",
            symptom=f"what {ref.host} printed for {', '.join(e.fact for e in failed)} could not "
            "be read: the site's state is unknown",
            evidence=[f"`{e.command}`: {e.reason}; first line: {e.first_line}" for e in failed],
            cause="the command printed something other than what it prints on a quiet host "
            "(a tool's warning or a login script's text on its output, or another version's "
            "format)",
            fix=f"run the command on {ref.host} by hand to see what it prints, and remove "
            "what the login adds to it",
            next=[on_host(ref.host, failed[0].command)],
            unparsed=[
                UnparsedOutput(
                    fact=e.fact, command=e.command, first_line=e.first_line, reason=e.reason
                )
                for e in failed
            ],
        )


def unreadable_log(network: Network) -> Iterator[Finding]:
    """A container whose log could not be read: said, so that no finding's silence about it
    is taken for a clean log."""
    for ref, state in network.podman_sites():
        for component, why in sorted(state.logs_unavailable.items()):
            container = (
                _router(network, ref)
                if component == "router"
                else names.controller_container(state.user)
            )
            yield finding(
                "log-unavailable",
                ref,
                "info",
                symptom=f"the {component} log on {ref.host} could not be read: findings that "
                "need its lines cannot be made there",
                evidence=[why],
                cause="the container logs to the journal (podman's journald log driver), "
                "which neither podman logs nor journalctl shows to the login user",
                fix=f"let the login user read its journal on {ref.host} (add it to the "
                "systemd-journal group), or read the log there as a user who can",
                next=[on_host(ref.host, f"journalctl --user -n 100 CONTAINER_NAME={container}")],
            )


def _key_refused(network: Network, ref: SiteRef, p: ModelEndpoint, evidence: list[str]) -> Finding:
    variable = f"{p.prefix}_MODEL_API_KEY_FILE"
    declared = p.model_api_key_file is not None
    cause = (
        f"the key in the file {variable} names is not one the server takes (or could not be read)"
        if declared
        else f"the model server requires an API key and {variable} names no key file"
    )
    return finding(
        "model-key-refused",
        ref,
        "error",
        symptom=f"the model server of {p.label} answers but refuses the request (401/403): "
        "it needs its API key",
        evidence=[*evidence, f"{variable}: {'set' if declared else 'not set'}"],
        cause=cause,
        fix=f"write the server's key into a file only you can read (chmod 600) and name it "
        f"in {variable}; then test_model",
        next=[
            set_variable(network, variable, None, "a file holding the model server's API key"),
            call("test_model", target=p.label),
        ],
    )


PODMAN_RULES = (
    read_unparsed,
    unreadable_log,
    tmp_not_writable,
    certs_not_readable,
    private_key_readable,
    ssl_profile_base_path,
    no_auto_restart,
    autostart_at_boot,
    linger_off,
    podman_unhandled_reboot,
    unit_failed_on_stop,
    stale_status,
    model_not_serving,
)
