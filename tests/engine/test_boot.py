"""The host's boot as the state read tells it (issue 46): whether the user lingers, a manager
that does not answer, podman's unhandled-reboot refusal; and what status and diagnose say of
a site that does not come back by itself, decided once (``predicates.boot_blocker``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fake_connector import FakeConnector, Reply
from skupper_mcp.engine.condition import after_reboot, site_condition
from skupper_mcp.engine.findings import RULES, Network
from skupper_mcp.engine.predicates import boot_blocker
from skupper_mcp.engine.readings import Asked, PodmanReading, Unread
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.errors import UserManagerDown
from skupper_mcp.facts.boot import BootFacts, parse_boot, parse_linger
from skupper_mcp.facts.site_state import SiteState, parse_site_state
from skupper_mcp.results import Finding
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.topology import load_topology

STATES = Path(__file__).resolve().parent / "site_states"
HUB = SiteRef("rhel-ai", "hub-rhel-ai", "provider", "podman")
#: systemd's words (src/shared/bus-util.c bus_log_connect_error), old and new
NO_BUS = "Failed to connect to bus: No such file or directory"
NO_BUS_NEW = "Failed to connect to user scope bus via local transport: No such file or directory"
#: podman 5.1+'s refusal (libpod/runtime_linux.go checkBootID)
REFUSED = (
    "Error: current system boot ID differs from cached boot ID; an unhandled reboot has "
    'occurred. Please delete directories "/run/user/1000/containers" and '
    '"/run/user/1000/libpod/tmp" and re-run Podman'
)


def recorded(phase: str) -> str:
    return (STATES / phase / "rhel-ai.txt").read_text()


def reading(found: SiteState, asked: Asked | None = None) -> PodmanReading:
    return PodmanReading(HUB, PodmanSite(FakeConnector("rhel-ai"), "default"), found, asked)


def with_section(text: str, section: str, body: str, rc: int, stderr: str = "") -> str:
    """The recorded reading with ``section``'s frame replaced (or added before @@end)."""
    framed = "".join(f"|{line}\n" for line in body.splitlines()) + "\n"
    if stderr:
        framed += "@@stderr\n" + "".join(f"|{line}\n" for line in stderr.splitlines())
    frame = f"@@section {section}\n{framed}@@rc {rc}\n"
    pattern = re.compile(rf"(?ms)^@@section {section}\n.*?^@@rc \d+\n")
    if pattern.search(text):
        return pattern.sub(lambda _: frame, text, count=1)
    return text.replace("@@end", frame + "@@end")


@pytest.mark.parametrize(
    ("said", "lingers"),
    [("Linger=yes", True), ("Linger=no", False), ("no", False), ("Linger=maybe", None), ("", None)],
)
def test_linger_is_read_from_its_one_word(said: str, lingers: bool | None) -> None:
    assert parse_linger(said) is lingers


def test_the_recorded_reading_says_the_user_lingers() -> None:
    assert parse_site_state(recorded("up")).boot == BootFacts(linger=True)


@pytest.mark.parametrize("said", [NO_BUS, NO_BUS_NEW])
def test_a_manager_that_does_not_answer_is_a_fact_not_an_empty_unit_list(said: str) -> None:
    facts = parse_boot(
        {"units": "", "units:rc": "1", "linger": "Linger=no\n", "linger:rc": "0"}, {"units": said}
    )
    assert facts == BootFacts(linger=False, no_bus=said)
    # a unit listing that failed otherwise is no missing manager
    assert parse_boot({"units": "", "units:rc": "1"}, {"units": "Access denied"}).no_bus is None


def test_podmans_refusal_after_an_unhandled_reboot_is_read_from_its_stderr() -> None:
    text = with_section(recorded("up"), "containers", "", 125, stderr=REFUSED)
    found = parse_site_state(text)
    assert found.boot.unhandled_reboot == REFUSED
    condition, reason = site_condition(reading(found, "up"))
    assert condition == "unknown" and "unhandled reboot" in reason, reason
    assert "delete the two directories" in reason
    ids = {f.id for f in findings_of(found, "up")}
    assert "podman-unhandled-reboot" in ids


def findings_of(found: SiteState, asked: Asked | None) -> list[Finding]:
    net = Network(load_topology(STATES / "topology.env"), {"rhel-ai": reading(found, asked)})
    return [f for rule in RULES for f in rule(net)]


def test_a_site_asked_up_that_does_not_linger_is_told_why_it_stays_down() -> None:
    text = with_section(recorded("down"), "linger", "Linger=no", 0)
    found = parse_site_state(text)
    assert found.boot.linger is False
    condition, reason = site_condition(reading(found, "up"))
    assert condition in ("stopped", "stale")
    assert "Linger=no" in reason and f"loginctl enable-linger {found.user}" in reason, reason
    assert "root" in reason and "polkit" in reason
    linger = [f for f in findings_of(found, "up") if f.id == "linger-off"]
    assert linger and "enable-linger" in linger[0].fix and "root" in linger[0].fix
    # stopped as asked: nothing to explain
    assert site_condition(reading(found, "down")) == ("stopped", "stopped by down, as asked")


def test_units_not_enabled_leave_a_site_down_after_a_reboot_and_status_says_so() -> None:
    found = parse_site_state(recorded("down"))
    found.enabled_at_boot.clear()
    why = boot_blocker(reading(found, "up"))
    assert why is not None and "not enabled" in why
    found.enabled_at_boot.update({"skupper-controller.service", "skupper-default.service"})
    assert boot_blocker(reading(found, "up")) is None


def test_down_leaves_the_units_disabled_and_diagnose_warns_when_they_are_enabled_again() -> None:
    found = parse_site_state(recorded("down"))
    assert not found.enabled_at_boot  # down disabled them
    assert "autostart-at-boot" not in {f.id for f in findings_of(found, "down")}
    found.enabled_at_boot.add("skupper-default.service")
    boot = [f for f in findings_of(found, "down") if f.id == "autostart-at-boot"]
    assert boot and boot[0].next[0].tool == "down"
    # our own enabled units on a site that is up are what setup makes: no finding
    up = parse_site_state(recorded("up"))
    assert "skupper-default.service" in up.enabled_at_boot
    assert "autostart-at-boot" not in {f.id for f in findings_of(up, "up")}


async def test_a_host_without_a_user_bus_is_the_sites_typed_error_with_the_fix() -> None:
    text = with_section(recorded("up"), "units", "", 1, stderr=NO_BUS)
    text = with_section(text, "linger", "Linger=no", 0)
    fake = FakeConnector("rhel-ai", lambda call: Reply(text))
    with pytest.raises(UserManagerDown) as caught:
        await PodmanSite(fake, "default").read()
    said = str(caught.value)
    assert NO_BUS in said and "Linger=no" in said
    assert "loginctl enable-linger" in said and "root" in said


BOOT = "6f1c2a9e-0d4b-4c1e-9a53-2b7f0c8d1e42"
NEXT_BOOT = "0e8d7c6b-5a49-4382-9170-fedcba987654"


def with_boot_id(text: str, boot_id: str) -> str:
    """The recorded reading as the state read prints it with the host's boot id."""
    return text.replace("@@now ", f"@@boot-id {boot_id}\n@@now ", 1)


def after(found: SiteState, asked: Asked, asked_boot: str | None) -> PodmanReading:
    return PodmanReading(
        HUB, PodmanSite(FakeConnector("rhel-ai"), "default"), found, asked, 0.0, asked_boot
    )


def test_the_boot_id_is_read_once_and_a_forged_or_bad_one_is_not_taken() -> None:
    assert "@@now " in recorded("up")
    assert parse_site_state(with_boot_id(recorded("up"), BOOT)).boot.boot_id == BOOT
    assert parse_site_state(recorded("up")).boot.boot_id is None  # not read: not known
    bad = parse_site_state(with_boot_id(recorded("up"), "not-a-uuid; rm -rf /"))
    assert bad.boot.boot_id is None
    assert bad.unparsed("boot-id") is not None  # said, never an empty default
    twice = with_boot_id(with_boot_id(recorded("up"), BOOT), NEXT_BOOT)
    assert any("@@boot-id" in r for r in parse_site_state(twice).refused)


def test_a_site_running_after_a_reboot_without_an_up_came_back_by_itself() -> None:
    found = parse_site_state(with_boot_id(recorded("up"), NEXT_BOOT))
    state, reason = site_condition(after(found, "up", BOOT))
    assert state == "up" and "came back by itself" in reason, reason
    assert after_reboot(after(found, "up", BOOT)) == "back-by-itself"
    # the same boot as the last up: our up started it, nothing to say
    assert after_reboot(after(found, "up", NEXT_BOOT)) is None
    assert "by itself" not in site_condition(after(found, "up", NEXT_BOOT))[1]
    # no boot id recorded with the up (an older record) or none read: not known
    assert after_reboot(after(found, "up", None)) is None
    # a down since: a reboot is not what stopped it
    assert after_reboot(after(found, "down", BOOT)) is None


def test_a_site_not_back_after_a_reboot_is_stopped_with_why() -> None:
    text = with_section(with_boot_id(recorded("down"), NEXT_BOOT), "linger", "Linger=no", 0)
    found = parse_site_state(text)
    reading_now = after(found, "setup", BOOT)
    state, reason = site_condition(reading_now)
    assert state == "stopped", (state, reason)
    assert "rebooted since the last setup" in reason and "did not come back" in reason
    assert "Linger=no" in reason and "loginctl enable-linger" in reason, reason
    assert after_reboot(reading_now) == "not-back"
    # podman's refusal: nothing runs, and the site is not back
    refused = with_section(with_boot_id(recorded("up"), NEXT_BOOT), "containers", "", 125, REFUSED)
    assert after_reboot(after(parse_site_state(refused), "up", BOOT)) == "not-back"


def test_a_host_whose_manager_is_gone_after_a_reboot_did_not_come_back() -> None:
    down = UserManagerDown("rhel-ai", "cloud-user", NO_BUS, False, NEXT_BOOT)
    unread = Unread(HUB, down, "up", 0.0, BOOT)
    state, reason = site_condition(unread)
    assert state == "unknown" and "rebooted since the last up" in reason, reason
    assert "Linger=no" in reason and "loginctl enable-linger cloud-user" in reason, reason
    assert after_reboot(unread) == "not-back"
    assert after_reboot(Unread(HUB, down, "up", 0.0, NEXT_BOOT)) is None  # no reboot since


def test_podmans_refusal_is_named_even_where_the_user_manager_is_gone_too() -> None:
    # linger off: no /run/user/UID, so podman keeps its alive file under /tmp (no tmpfs) and
    # refuses after the next reboot, while systemctl finds no manager at all
    down = UserManagerDown("rhel-ai", "cloud-user", NO_BUS, False, NEXT_BOOT, REFUSED)
    assert REFUSED in str(down) and "delete the two directories" in str(down)
    net = Network(load_topology(STATES / "topology.env"), {"rhel-ai": Unread(HUB, down, "up")})
    found = [f for rule in RULES for f in rule(net) if f.id == "podman-unhandled-reboot"]
    assert found and "enable-linger cloud-user" in found[0].fix, found
