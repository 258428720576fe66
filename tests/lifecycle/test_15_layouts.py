"""Setup on both of Skupper's layouts: a root provider (rhtevan-work) keeps everything in
/var/lib/skupper and /etc/systemd/system under the system manager; the non-root hosts in
their home under their user manager (pkg/nonkube/api/environment.go,
internal/nonkube/common/systemd.go)."""

from __future__ import annotations

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
