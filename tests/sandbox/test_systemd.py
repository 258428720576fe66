"""The emulated `systemctl --user` and user manager, used as a user on the host would."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostkit import HostKit, make_host, running_host, wait_for


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, address="127.201.0.10") as kit, kit.manager():
        yield kit


START_WATCH = """[Unit]
Description=watch {name}
[Service]
ExecStart=/bin/sh -c 'podman start {name} >/dev/null; rc=$(podman wait {name}); exit $rc'
ExecStop=podman stop -t 5 {name}
Restart=on-failure
{extra}
"""


def test_restart_on_failure_restarts_a_killed_process(host: HostKit) -> None:
    host.write_unit(
        "crashy.service",
        "[Service]\nExecStart=/bin/sleep 60\nRestart=on-failure\nRestartSec=200ms\n",
    )
    assert host.sh("systemctl --user start crashy").returncode == 0
    first = host.show("crashy", "MainPID", "NRestarts")
    assert first["NRestarts"] == "0" and first["MainPID"] != "0"

    os.kill(int(first["MainPID"]), signal.SIGKILL)

    def restarted() -> bool:
        now = host.show("crashy", "ActiveState", "MainPID", "NRestarts")
        return now["ActiveState"] == "active" and now["MainPID"] not in ("0", first["MainPID"])

    assert wait_for(restarted, timeout=30, what="systemd to restart crashy")
    assert host.show("crashy", "NRestarts")["NRestarts"] == "1"


def _stopped_watch_unit(host: HostKit, success_exit_status: str) -> dict[str, str]:
    """Stop a start-watch unit whose container dies of SIGTERM (`podman wait` -> 143)."""
    assert host.sh("podman create --name router busybox sleep 60").returncode == 0
    extra = f"SuccessExitStatus={success_exit_status}" if success_exit_status else ""
    host.write_unit("watch.service", START_WATCH.format(name="router", extra=extra))
    assert host.sh("systemctl --user start watch.service").returncode == 0
    assert wait_for(
        lambda: host.sh("podman ps -q --filter name=router").stdout.strip() != "",
        timeout=30,
        what="the unit's router container to run",
    )
    host.sh("systemctl --user stop watch.service")
    assert host.sh("podman inspect --format '{{.State.ExitCode}}' router").stdout.strip() == "143"
    return host.show("watch", "ActiveState", "Result", "ExecMainCode", "ExecMainStatus")


def test_success_exit_status_sigterm_does_not_make_exit_143_clean(host: HostKit) -> None:
    # systemd matches a signal name only against a death BY that signal (CLD_KILLED); the
    # wrapper *exits* 143, so the unit fails (src/basic/exit-status.c is_clean_exit).
    state = _stopped_watch_unit(host, "SIGTERM")
    assert state == {
        "ActiveState": "failed",
        "Result": "exit-code",
        "ExecMainCode": "1",
        "ExecMainStatus": "143",
    }


def test_success_exit_status_143_makes_the_wrappers_exit_clean(host: HostKit) -> None:
    state = _stopped_watch_unit(host, "143 SIGTERM")
    assert state["ActiveState"] == "inactive" and state["Result"] == "success"


def test_start_watch_unit_without_success_exit_status_ends_failed(host: HostKit) -> None:
    state = _stopped_watch_unit(host, "")
    assert state["ActiveState"] == "failed" and state["Result"] == "exit-code"
    failed = host.sh("systemctl --user is-failed watch.service")
    assert (failed.returncode, failed.stdout) == (0, "failed\n")


def test_a_daemon_killed_by_sigterm_is_clean_without_success_exit_status(host: HostKit) -> None:
    # EXIT_CLEAN_DAEMON: a long-running main process dying of SIGHUP/INT/TERM/PIPE is clean.
    host.write_unit("daemon.service", "[Service]\nExecStart=/bin/sleep 60\n")
    assert host.sh("systemctl --user start daemon").returncode == 0
    pid = int(host.show("daemon", "MainPID")["MainPID"])
    os.kill(pid, signal.SIGTERM)
    assert wait_for(
        lambda: host.show("daemon", "ActiveState")["ActiveState"] == "inactive",
        timeout=30,
        what="daemon inactive after its SIGTERM",
    )
    assert host.show("daemon", "Result", "ExecMainCode") == {
        "Result": "success",
        "ExecMainCode": "2",
    }


def test_a_oneshot_killed_by_sigterm_fails_unless_success_exit_status_names_it(
    host: HostKit,
) -> None:
    # EXIT_CLEAN_COMMAND (Type=oneshot): only SuccessExitStatus= makes a signal death clean.
    script = "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'kill -TERM $$$$'\n"
    host.write_unit("plain.service", script)
    host.write_unit("named.service", script + "SuccessExitStatus=SIGTERM\n")
    assert host.sh("systemctl --user start plain").returncode != 0
    assert host.show("plain", "ActiveState", "Result") == {
        "ActiveState": "failed",
        "Result": "signal",
    }
    assert host.sh("systemctl --user start named").returncode == 0
    assert host.show("named", "Result")["Result"] == "success"


def test_remain_after_exit_stays_active_after_its_process_exits(host: HostKit) -> None:
    host.write_unit("site.service", "[Service]\nExecStart=/bin/true\nRemainAfterExit=yes\n")
    assert host.sh("systemctl --user start site").returncode == 0
    assert wait_for(
        lambda: host.show("site", "SubState")["SubState"] == "exited",
        timeout=30,
        what="the oneshot site to have exited",
    )
    active = host.sh("systemctl --user is-active site.service")
    assert (active.returncode, active.stdout) == (0, "active\n")
    assert host.show("site", "MainPID")["MainPID"] == "0"


def test_enable_and_disable_manage_default_target_links(host: HostKit) -> None:
    path = host.write_unit(
        "skupper-site.service",
        "[Service]\nExecStart=/bin/sleep 60\n[Install]\nWantedBy=default.target\n",
    )
    link = host.unit_dir / "default.target.wants" / "skupper-site.service"

    enabled = host.sh("systemctl --user enable --now skupper-site.service")
    assert enabled.returncode == 0
    assert f"Created symlink {link} → {path}." in enabled.stderr
    assert link.is_symlink() and os.readlink(link) == str(path)
    assert host.sh("systemctl --user is-enabled skupper-site").stdout == "enabled\n"
    assert host.sh("systemctl --user is-active skupper-site").returncode == 0

    disabled = host.sh("systemctl --user disable --now skupper-site.service")
    assert disabled.returncode == 0 and f'Removed "{link}".' in disabled.stderr
    assert not link.exists()
    not_enabled = host.sh("systemctl --user is-enabled skupper-site")
    assert (not_enabled.returncode, not_enabled.stdout) == (1, "disabled\n")
    assert host.sh("systemctl --user is-active skupper-site").stdout == "inactive\n"


def test_unit_without_install_section_is_static(host: HostKit) -> None:
    host.write_unit("watch.service", "[Service]\nExecStart=/bin/sleep 60\n")
    result = host.sh("systemctl --user is-enabled watch.service")
    assert (result.returncode, result.stdout) == (0, "static\n")
    assert host.show("watch", "UnitFileState")["UnitFileState"] == "static"


def test_unknown_unit_cannot_start(host: HostKit) -> None:
    result = host.sh("systemctl --user start ghost.service")
    assert result.returncode == 5
    assert result.stderr == "Failed to start ghost.service: Unit ghost.service not found.\n"
    assert host.show("ghost", "LoadState")["LoadState"] == "not-found"
    inactive = host.sh("systemctl --user is-active ghost")
    assert (inactive.returncode, inactive.stdout) == (3, "inactive\n")


def test_a_unit_that_keeps_failing_hits_the_start_limit(host: HostKit) -> None:
    host.write_unit(
        "flaky.service", "[Service]\nExecStart=/bin/false\nRestart=always\nRestartSec=10ms\n"
    )
    host.sh("systemctl --user start flaky")
    assert wait_for(
        lambda: host.show("flaky", "Result")["Result"] == "start-limit-hit",
        timeout=30,
        what="flaky's start-limit-hit",
    )
    assert host.show("flaky", "ActiveState", "NRestarts") == {
        "ActiveState": "failed",
        "NRestarts": "5",
    }
    refused = host.sh("systemctl --user start flaky")
    assert refused.returncode == 1 and "attempted too often" in refused.stderr


def test_stop_escalates_to_sigkill_after_timeout_stop_sec(host: HostKit) -> None:
    host.write_unit(
        "stubborn.service",
        "[Service]\nExecStart=/bin/sh -c 'trap \"\" TERM; while :; do sleep 0.1; done'\n"
        "TimeoutStopSec=300ms\n",
    )
    assert host.sh("systemctl --user start stubborn").returncode == 0
    host.sh("systemctl --user stop stubborn")
    assert host.show("stubborn", "ActiveState", "Result") == {
        "ActiveState": "failed",
        "Result": "timeout",
    }


def test_systemctl_needs_the_user_bus(tmp_path: Path) -> None:
    kit = make_host(tmp_path, address="127.201.0.11")
    no_runtime = kit.sh("systemctl --user is-active x", runtime=False)
    assert (no_runtime.returncode, no_runtime.stderr) == (
        1,
        "Failed to connect to bus: No medium found\n",
    )
    no_manager = kit.sh("systemctl --user is-active x")
    assert (no_manager.returncode, no_manager.stderr) == (
        1,
        "Failed to connect to bus: No such file or directory\n",
    )
    system = kit.sh("systemctl is-active x")
    assert system.returncode == 1
    assert "System has not been booted with systemd as init system (PID 1)." in system.stderr


def test_loginctl_reports_lingering(tmp_path: Path) -> None:
    kit = make_host(tmp_path, address="127.201.0.12")
    assert kit.sh('loginctl show-user "$(id -un)" -p Linger --value').stdout == "yes\n"
    assert kit.sh("loginctl show-user cloud-user --property=Linger").stdout == "Linger=yes\n"
    assert kit.sh("loginctl enable-linger cloud-user").returncode == 0
