"""Hosts as their sources behave: users, podman and systemd (docs/sandbox.md section 11).

Each test is a row of the "Hosts: users, podman and systemd" table: it fails on a sandbox
that is easier than the real thing and passes on one that does what the source does.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostkit import HostKit, running_host, wait_for
from skupper_mcp.facts import names
from skupper_mcp.sites import units
from skupper_mcp.sites.podman import _recreate_args
from skupper_sandbox.emulated.skupper import render, site_state
from skupper_sandbox.emulated.skupper.paths import NamespacePaths
from skupper_sandbox.layout import WorldSpec, plan_world
from skupper_sandbox.testing import World


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, address="127.201.0.30") as kit, kit.manager():
        yield kit


def _show(kit: HostKit, unit: str, *props: str) -> dict[str, str]:
    out = kit.sh(f"systemctl --user show {unit} -p {','.join(props)}").stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


# --------------------------------------------------------------------------- systemd (C3)


def test_the_products_watch_unit_stops_clean_when_the_container_dies_of_sigterm(
    host: HostKit,
) -> None:
    """start-watch.sh exits 143 when `podman stop` ends a container that does not handle
    SIGTERM; the product's unit must count that as a clean stop on real systemd."""
    assert host.sh("podman create --name box busybox sleep 600").returncode == 0
    script = host.home / names.WATCH_SCRIPT_PATH
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(units.watch_script("podman"))
    unit = units.watch_unit("box.service", "box", "podman", "test box")
    host.write_unit(unit.name, unit.content)
    assert host.sh("systemctl --user start box.service").returncode == 0
    assert wait_for(
        lambda: host.sh("podman ps -q --filter name=box").stdout.strip() != "",
        timeout=30,
        what="the unit's box container to run",
    )

    assert host.sh("systemctl --user stop box.service").returncode == 0

    assert host.sh("podman inspect --format '{{.State.ExitCode}}' box").stdout.strip() == "143"
    state = _show(host, "box.service", "ActiveState", "Result", "ExecMainStatus")
    assert state == {"ActiveState": "inactive", "Result": "success", "ExecMainStatus": "143"}


# --------------------------------------------------------------------------- users (A3)


def test_a_host_reports_its_own_non_root_user(world: World) -> None:
    """No real host says it is root yet keeps Skupper in ~/.local/share (issue 7)."""
    code, out, err = world.ssh("rhel-ai", 'echo "$(id -u) $(id -un) $(whoami) $USER $LOGNAME"')
    assert code == 0, err
    # the example's users, or in a real-podman world the Unix users made for it
    rhel_ai, local = world.hosts["rhel-ai"], world.hosts["local"]
    user, uid = (rhel_ai.user, rhel_ai.uid) if rhel_ai.real_user else ("cloud-user", 1000)
    assert out.split() == [str(uid), user, user, user, user]
    info = json.loads((world.dir / "hosts/rhel-ai/host.json").read_text())
    assert (info["user"], info["uid"]) == (user, uid) and uid != 0
    local_user = local.user if local.real_user else "ezhang"
    assert world.ssh("local", "id -un")[1] == f"{local_user}\n"
    topology = world.topology.read_text()
    assert f"RHEL_AI_SSH_USER={user}" in topology
    assert f"LOCAL_SSH_USER={local_user}" in topology


def test_root_is_a_per_host_choice_of_sandbox_up(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no SSH host crc"):
        plan_world(tmp_path, "127.250.0", WorldSpec(root_hosts=frozenset({"crc"})))
    info = plan_world(tmp_path, "127.250.0", WorldSpec(root_hosts=frozenset({"rhtevan-work"})))
    users = {h.name: (h.user, h.uid) for h in info.ssh_hosts}
    assert users == {
        "local": ("ezhang", 1000),
        "rhel-ai": ("cloud-user", 1000),
        "rhtevan-work": ("root", 0),
    }


def _login(host: HostKit, command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` through the host's SSH login shim, as OpenSSH's ForceCommand does."""
    return subprocess.run(
        [sys.executable, "-m", "skupper_sandbox.login", str(host.host_dir)],
        env={**os.environ, "SSH_ORIGINAL_COMMAND": command},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture
def root_host(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, address="127.201.0.31", as_root=True) as kit, kit.manager():
        yield kit


def test_a_root_host_has_the_rootful_layout_under_its_sysroot(root_host: HostKit) -> None:
    # pkg/nonkube/api/environment.go: /var/lib/skupper for uid 0; common/systemd.go:
    # /etc/systemd/system and the system systemctl.
    site = "apiVersion: skupper.io/v2alpha1\nkind: Site\nmetadata:\n  name: hub\n"
    applied = root_host.sh(
        "SKUPPER_PLATFORM=podman skupper system apply -f - -n default <<'EOF'\n" + site + "EOF"
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    sysroot = root_host.info.sysroot
    assert (sysroot / "var/lib/skupper/namespaces/default/input/resources/Site-hub.yaml").is_file()
    assert not (root_host.home / ".local/share/skupper").exists()

    done = _login(root_host, "id -u; ls /var/lib/skupper/namespaces; ls -d /etc/systemd/system")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["0", "default"]

    unit = "[Service]\nExecStart=/bin/sleep 60\n"
    made = _login(root_host, f"printf '{unit}' > /etc/systemd/system/x.service")
    assert made.returncode == 0, made.stderr
    assert (sysroot / "etc/systemd/system/x.service").is_file()
    started = root_host.sh("systemctl start x && systemctl is-active x")
    assert (started.returncode, started.stdout) == (0, "active\n")
    user = root_host.sh("systemctl --user is-active x", runtime=False)
    assert user.returncode != 0 and "Failed to connect to bus" in user.stderr


# --------------------------------------------------------------------------- router user (B4)

HUB = """apiVersion: skupper.io/v2alpha1
kind: Site
metadata: {name: hub-a}
spec: {linkAccess: default}
---
apiVersion: skupper.io/v2alpha1
kind: RouterAccess
metadata: {name: hub-a-public}
spec:
  roles: [{name: inter-router, port: 18000}, {name: edge, port: 18001}]
  tlsCredentials: hub-a-public
"""
ROUTER_IMAGE = "quay.io/skupper/skupper-router:3.4.1"


@pytest.fixture
def rendered(tmp_path: Path) -> Iterator[tuple[HostKit, NamespacePaths]]:
    """A host with a rendered namespace: its certificates are 0640, as Skupper writes them."""
    with running_host(tmp_path, "hub", "127.201.0.32", skupper_version="2.1.3") as kit:
        paths = NamespacePaths(kit.home / ".local/share/skupper", "default")
        paths.input_resources.mkdir(parents=True)
        (paths.input_resources / "hub.yaml").write_text(HUB)
        render.render(paths, site_state.load(paths), cli_version="2.1.3", platform="podman")
        yield kit, paths


def _router(kit: HostKit, paths: NamespacePaths, name: str, *identity: str) -> str:
    """Create and start a router container as Skupper does, with the given --user/--userns;
    its state once it has settled ("running", or "exited <code>"): ``_settled_state``."""
    create = shlex.join(
        [
            "podman", "run", "-d", "--name", name, "--network", "host", *identity,
            "-e", "SSL_PROFILE_BASE_PATH=/etc/skupper-router",
            "-v", f"{paths.router}:/etc/skupper-router/config:z",
            "-v", f"{paths.certs}:/etc/skupper-router/runtime/certs:z",
            ROUTER_IMAGE,
        ]
    )  # fmt: skip
    assert kit.sh(create).returncode == 0
    return _settled_state(kit, name)


def _failed_router(kit: HostKit, paths: NamespacePaths, name: str, *identity: str) -> str:
    """``_router`` for a router that must stop: its exit, waited for however long a busy
    machine takes to get it there (``_settled_state``'s window would call it running)."""
    _router(kit, paths, name, *identity)

    def exited() -> str | None:
        state = _inspect_state(kit, name)
        return state if state.startswith("exited") else None

    return wait_for(exited, timeout=60, every=0.1, what=f"the router {name} to stop")


def _settled_state(kit: HostKit, name: str, window: float = 1.0) -> str:
    """The container's state once it has settled: a router that cannot read its
    certificates stops at once, so its exit is returned as soon as it is seen; one still
    running after ``window`` seconds is "running" (that window proves it did not stop)."""
    deadline = time.monotonic() + window
    state = _inspect_state(kit, name)
    while not state.startswith("exited") and time.monotonic() < deadline:
        time.sleep(0.05)
        state = _inspect_state(kit, name)
    return state


def _inspect_state(kit: HostKit, name: str) -> str:
    out = kit.sh(f"podman inspect --format '{{{{.State.Status}}}} {{{{.State.ExitCode}}}}' {name}")
    status, code = out.stdout.split()
    return status if status == "running" else f"{status} {code}"


def test_a_router_as_the_users_own_uid_reads_its_0640_certificates(
    rendered: tuple[HostKit, NamespacePaths],
) -> None:
    kit, paths = rendered
    key = paths.certs / "hub-a-public" / "tls.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o640
    assert _router(kit, paths, "r", "--user", "1000:1000", "--userns", "keep-id") == "running"


def test_a_router_as_the_users_own_uid_reads_keys_only_its_owner_may_read(
    rendered: tuple[HostKit, NamespacePaths],
) -> None:
    """Setup makes every tls.key 0600: the router Skupper makes reads it as its owner."""
    kit, paths = rendered
    keys = list(paths.certs.rglob("tls.key"))
    assert keys
    for key in keys:
        key.chmod(0o600)
    assert _router(kit, paths, "r", "--user", "1000:1000", "--userns", "keep-id") == "running"


def test_a_router_that_reads_only_through_the_group_cannot_read_a_0600_key(
    rendered: tuple[HostKit, NamespacePaths],
) -> None:
    """Another uid in the user's group (keep-id maps the gid to itself) reads the 0640
    certificates but not a 0600 key: skrouterd names the certFile of the pair it could not
    load (``pn_ssl_domain_set_credentials``, src/tls/tls_amqp.c@3.4.1) and stops."""
    kit, paths = rendered
    for key in paths.certs.rglob("tls.key"):
        key.chmod(0o600)
    assert _failed_router(kit, paths, "r", "--user", "10000:1000", "--userns", "keep-id") == (
        "exited 1"
    )
    log = kit.sh("podman logs r").stdout + kit.sh("podman logs r 2>&1").stdout
    assert "Failed to configure TLS certFile '/etc/skupper-router/runtime/certs/" in log
    assert "Permission denied" in log


def test_a_router_as_the_image_user_cannot_read_them_until_chmod_o_r(
    rendered: tuple[HostKit, NamespacePaths],
) -> None:
    """Certificates unreadable to the router: uid 10000 is in the user's subordinate range."""
    kit, paths = rendered
    assert _failed_router(kit, paths, "r") == "exited 1"
    log = kit.sh("podman logs r").stdout + kit.sh("podman logs r 2>&1").stdout
    assert "Failed to configure TLS caCertFile '/etc/skupper-router/runtime/certs/" in log
    assert "Permission denied" in log
    assert kit.sh(f"chmod -R o+r {shlex.quote(str(paths.certs))}").returncode == 0
    assert kit.sh("podman rm -f r").returncode == 0
    assert _router(kit, paths, "r") == "running"


def test_the_products_tmpfs_recreation_keeps_the_routers_user_and_userns(
    rendered: tuple[HostKit, NamespacePaths],
) -> None:
    """Re-created as setup does it (no chmod here): the router still reads its certificates."""
    kit, paths = rendered
    identity = ("--user", "1000:1000", "--userns", "keep-id")
    assert _router(kit, paths, "default-skupper-router", *identity) == "running"
    inspect = json.loads(kit.sh("podman inspect default-skupper-router").stdout)[0]
    args = _recreate_args("default-skupper-router", inspect)
    assert args[args.index("--user") + 1] == "1000:1000"
    assert args[args.index("--userns") + 1] == "keep-id"
    assert kit.sh("podman rm -f default-skupper-router").returncode == 0
    assert kit.sh(shlex.join(args)).returncode == 0
    assert kit.sh("podman start default-skupper-router").returncode == 0
    assert _settled_state(kit, "default-skupper-router") == "running"
