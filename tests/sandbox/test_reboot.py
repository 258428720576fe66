"""A host that reboots (issue 46): ``skupper-sandbox reboot HOST`` ends every process of it and
boots only what a real host starts, and the product says which sites came back by themselves
and why the others did not, on either podman.

One world per podman kind, its tests in order: rhel-ai lingers (the default), rhtevan-work
does not (``linger=no``), provider-3 has no user session at all (``no-user-session``). The
product is driven through its command, as a user does (``--json``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from polling import wait_for
from product import cli_json, reboot, status_sites
from skupper_sandbox import real_podman
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

NS = "default"
OUR_UNITS = (f"skupper-{NS}.service", "skupper-controller.service")
#: How long a rebooted host with linger takes to have its router back: its manager starts the
#: enabled units, the watch unit starts the router container (a loaded 2-core machine).
BACK_WITHIN = 60.0

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module", params=["emulated", "real"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    kind = str(request.param)
    if kind == "real" and (why_not := real_podman.probe()) is not None:
        pytest.skip(f"real podman cannot run here: {why_not}")
    spec = WorldSpec(
        providers=3,
        kubernetes=False,
        namespace=NS,
        podman=kind,
        host_quirks={"rhtevan-work": ("linger=no",), "provider-3": ("no-user-session",)},
    )
    with running_world(tmp_path_factory.mktemp(f"reboot-{kind}"), spec) as made:
        assert made.info.podman == kind
        yield made


#: How long one CLI run may take here (a setup of three hosts on a loaded machine).
CLI_SECONDS = 240


def cli(world: World, *args: str) -> tuple[int, dict[str, Any]]:
    return cli_json(world.topology, *args, timeout=CLI_SECONDS)


def sites(world: World) -> dict[str, dict[str, Any]]:
    return status_sites(world.topology, timeout=CLI_SECONDS)


def enabled(world: World, host: str) -> list[str]:
    wants = world.host_dir(host) / "home/.config/systemd/user/default.target.wants"
    return sorted(p.name for p in wants.iterdir()) if wants.is_dir() else []


def test_setup_check_names_linger_off_before_setup(world: World) -> None:
    _, check = cli(world, "setup", "--check")
    linger = {c["site"]: c for c in check["checks"] if c["name"] == "linger"}
    assert linger["rhel-ai"]["status"] == "pass"
    off = linger["rhtevan-work"]
    assert off["status"] == "warn" and "Linger=no" in off["detail"], off
    assert "loginctl enable-linger" in off["hint"] and "root" in off["hint"], off
    assert "polkit" in off["hint"], off
    # no user manager at all: systemctl's own words, and the linger fix
    systemd = {c["site"]: c for c in check["checks"] if c["name"] == "systemd-user"}
    assert systemd["provider-3"]["status"] == "fail"
    assert "Failed to connect to bus" in systemd["provider-3"]["detail"]
    assert "enable-linger" in (systemd["provider-3"]["hint"] or "")


def test_a_host_without_a_user_bus_is_its_own_error_until_it_lingers(world: World) -> None:
    state = sites(world)["provider-3"]
    said = state["state_reason"]
    assert "Failed to connect to bus" in said and "loginctl enable-linger" in said, state
    assert "could not be read" not in said  # a typed error, not a parse failure
    # setup stops before changing anything, naming the host and the fix
    code, result = cli(world, "setup")
    assert code != 0 and not result["ok"]
    by_host = {s["host"]: s for s in result["sites"]}
    assert "enable-linger" in (by_host["provider-3"]["reason"] or ""), by_host["provider-3"]
    # what root's `loginctl enable-linger` does: the manager comes up at once
    done = world.sandbox("linger", "provider-3", "yes")
    assert done.returncode == 0, done.stderr
    wait_for(
        lambda: "Failed to connect" not in sites(world)["provider-3"]["state_reason"],
        timeout=30,
        every=0.5,
        what="provider-3's user manager after enable-linger",
    )


def installed(world: World, host: str) -> list[str]:
    """The user units of Skupper's and ours in the host's unit folder."""
    units = world.host_dir(host) / "home/.config/systemd/user"
    return sorted(p.name for p in units.glob("skupper*.service")) if units.is_dir() else []


def test_setup_enables_what_it_installs(world: World) -> None:
    code, result = cli(world, "setup")
    assert code == 0 and result["ok"], result["summary"]
    for host in ("rhel-ai", "rhtevan-work", "provider-3", "local"):
        assert enabled(world, host) == sorted(OUR_UNITS), host
        # setup leaves no unit that would not start at boot
        assert installed(world, host) == enabled(world, host), host
    # nothing rebooted since setup: nobody came back by itself
    assert all(s["after_reboot"] is None for s in sites(world).values())


def test_a_lingering_provider_comes_back_by_itself_after_a_reboot(world: World) -> None:
    reboot(world, "rhel-ai")
    seen: list[dict[str, Any]] = []

    def back() -> dict[str, Any] | None:
        site = sites(world)["rhel-ai"]
        seen.append(site)
        return site if site["state"] == "up" else None

    site = wait_for(back, timeout=BACK_WITHIN, every=1, what="rhel-ai back after its reboot")
    # no up was called: status says it came back by itself, in words and as a field
    assert site["after_reboot"] == "back-by-itself", site
    assert "came back by itself" in site["state_reason"], site
    # before it was back, status read it stopped after the reboot, saying so
    for early in seen[:-1]:
        if early["after_reboot"] == "not-back":
            assert early["state"] == "stopped", early
            assert "rebooted since the last" in early["state_reason"], early
        else:  # its router runs while the controller still starts
            assert early["after_reboot"] == "back-by-itself", early
    # the others did not reboot
    assert sites(world)["rhtevan-work"]["after_reboot"] is None


def test_a_provider_that_does_not_linger_stays_down_and_status_says_why(world: World) -> None:
    reboot(world, "rhtevan-work")
    site = sites(world)["rhtevan-work"]
    # no user manager after the reboot: what runs is not known, and status says why
    assert site["state"] == "unknown", site
    assert site["after_reboot"] == "not-back", site
    assert "did not come back by itself" in site["state_reason"], site
    assert "Linger=no" in site["state_reason"], site
    assert "loginctl enable-linger" in site["state_reason"], site
    # diagnose names it too, with the fix
    _, found = cli(world, "diagnose")
    rows = [f for f in found["findings"] if f["host"] == "rhtevan-work"]
    assert rows, found
    assert any("enable-linger" in (f["fix"] + f["symptom"] + " ".join(f["evidence"])) for f in rows)


def test_after_enable_linger_and_another_reboot_it_comes_back(world: World) -> None:
    done = world.sandbox("linger", "rhtevan-work", "yes")
    assert done.returncode == 0, done.stderr
    reboot(world, "rhtevan-work")

    def back() -> dict[str, Any] | None:
        site = sites(world)["rhtevan-work"]
        return site if site["state"] == "up" else None

    site = wait_for(
        back,
        timeout=BACK_WITHIN,
        every=1,
        what="rhtevan-work back after enable-linger and a reboot",
    )
    assert site["after_reboot"] == "back-by-itself", site  # no up since
    _, found = cli(world, "diagnose")
    assert not [f for f in found["findings"] if f["id"] == "linger-off"], found


def test_a_unit_never_enabled_does_not_start_at_boot_and_down_stays_down(world: World) -> None:
    # down disables: a site stopped as asked stays stopped across a reboot
    code, _ = cli(world, "down", "rhel-ai")
    assert code == 0
    assert enabled(world, "rhel-ai") == []
    reboot(world, "rhel-ai")
    site = sites(world)["rhel-ai"]
    assert site["state"] == "stopped" and "as asked" in site["state_reason"], site
    # a unit started but never enabled: the reboot leaves it down, and status says so
    code, _ = cli(world, "up", "rhel-ai")
    assert code == 0 and enabled(world, "rhel-ai") == sorted(OUR_UNITS)
    units = world.host_dir("rhel-ai") / "home/.config/systemd/user/default.target.wants"
    for name in OUR_UNITS:
        (units / name).unlink()
    reboot(world, "rhel-ai")
    site = sites(world)["rhel-ai"]
    assert site["state"] == "stopped", site
    assert site["after_reboot"] == "not-back", site
    assert "not enabled" in site["state_reason"], site
    # up brings it back and enables them as it starts them
    code, _ = cli(world, "up", "rhel-ai")
    assert code == 0 and enabled(world, "rhel-ai") == sorted(OUR_UNITS)
    assert sites(world)["rhel-ai"]["state"] == "up"
