"""Setup on both of Skupper's layouts: a root provider (rhtevan-work) keeps everything in
/var/lib/skupper and /etc/systemd/system under the system manager; the non-root hosts in
their home under their user manager (pkg/nonkube/api/environment.go,
internal/nonkube/common/systemd.go)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from skupper_sandbox import hostenv, real_podman
from skupper_sandbox.emulated import podman_api
from skupper_sandbox.testing import World

from .conftest import NS, is_root, namespace_dir, on_host, skupper_home, unit_dir


def test_hosts_report_their_own_users(built: World) -> None:
    """Root on the root provider; on rhel-ai the example's cloud-user (uid 1000), or, in a
    real-podman world, the Unix user made for it (``skupper_sandbox.real_users``)."""
    rhel_ai = built.hosts["rhel-ai"]
    own = f"{rhel_ai.uid} {rhel_ai.user}" if rhel_ai.real_user else "1000 cloud-user"
    for host, expected in (("rhtevan-work", "0 root"), ("rhel-ai", own)):
        code, out, err = built.ssh(host, 'echo "$(id -u) $(id -un)"')
        assert code == 0, err
        assert out.strip() == expected, host
        assert is_root(built, host) == (host == "rhtevan-work")


def test_the_root_provider_uses_the_rootful_layout(built: World) -> None:
    host_dir = built.host_dir("rhtevan-work")
    ns = namespace_dir(built, "rhtevan-work")
    assert (ns / "runtime/resources").is_dir() and (ns / "input/resources").is_dir()
    assert not (host_dir / "home/.local/share/skupper").exists()
    units = unit_dir(built, "rhtevan-work")
    assert (units / f"skupper-{NS}.service").is_file()
    assert (units / "skupper-controller.service").is_file()
    assert not (host_dir / f"home/.config/systemd/user/skupper-{NS}.service").exists()
    # driven by the system manager, without XDG_RUNTIME_DIR
    code, out, err = built.ssh(
        "rhtevan-work",
        f"systemctl show -p ActiveState skupper-{NS}.service skupper-controller.service;"
        ' echo "xdg=${XDG_RUNTIME_DIR:-unset}"',
    )
    assert code == 0, err
    assert out.split() == ["ActiveState=active", "ActiveState=active", "xdg=unset"]
    user_manager = built.ssh("rhtevan-work", f"systemctl --user is-active skupper-{NS}.service")
    assert user_manager[0] != 0  # root has no user manager here


def test_the_non_root_hosts_keep_the_rootless_layout(built: World) -> None:
    for host in ("rhel-ai", "local"):
        home = built.host_dir(host) / "home"
        assert (namespace_dir(built, host) / "runtime/resources").is_dir()
        assert skupper_home(built, host).is_relative_to(home)
        assert (unit_dir(built, host) / f"skupper-{NS}.service").is_file()
        assert not (built.host_dir(host) / "sysroot/var/lib/skupper").exists()
        code, out, err = built.ssh(
            host, on_host(f"$SKMCP_CTL show -p ActiveState skupper-{NS}.service")
        )
        assert (code, out.strip()) == (0, "ActiveState=active"), err


def test_the_root_provider_runs_real_podman_when_the_world_has_it(built: World) -> None:
    """On a world made with real podman (``make e2e``: ``SKMCP_SANDBOX_PODMAN=real``) the
    root provider's router and controller are this machine's podman containers, listed with
    real podman's fields, and its podman.socket is served by podman, which sees the router."""
    if built.info.podman != "real":
        pytest.skip(f"this world's podman is {built.info.podman} ($SKMCP_SANDBOX_PODMAN)")
    code, out, err = built.ssh("rhtevan-work", "podman --version; podman ps -a --format json")
    assert code == 0, err
    version, listing = out.split("\n", 1)
    assert version == f"podman version {real_podman_version()}"
    rows = {row["Names"][0]: row for row in json.loads(listing)}
    router = rows[f"{NS}-skupper-router"]
    # real podman's own fields: a start time in seconds, the process a real one of here
    assert router["State"] == "running" and router["StartedAt"] > 0
    assert Path(f"/proc/{router['Pid']}").is_dir()
    assert rows["root-skupper-controller"]["State"] == "running"
    info = hostenv.load_host_info(built.host_dir("rhtevan-work"))
    state = podman_api.PodmanApi(podman_api.socket_path(info)).inspect(f"{NS}-skupper-router")
    assert state is not None and state.running and state.pid == router["Pid"]


def real_podman_version() -> str:
    done = subprocess.run(
        [real_podman.PODMAN, "--version"], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.split()[-1]
