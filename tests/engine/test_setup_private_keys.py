"""Private keys stay private: what setup plans for a site's open keys and for a router
that does not read them as their owner, and who a router container reads as."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fake_connector import FakeConnector
from skupper_mcp.engine.operations.setup import podman_setup_actions
from skupper_mcp.facts.private_keys import OpenKey, reads_as_owner
from skupper_mcp.facts.site_state import RouterContainer, parse_site_state
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.sites.work import Script

STATES = Path(__file__).resolve().parent / "site_states"


def recorded(phase: str, host: str) -> str:
    return (STATES / phase / f"{host}.txt").read_text()


def site(host: str) -> tuple[PodmanSite, FakeConnector]:
    fake = FakeConnector(host)
    return PodmanSite(fake, "default"), fake


def scripts(actions: list) -> list[str]:
    return [w.text for a in actions for w in a.does if isinstance(w, Script)]


def test_setup_makes_open_keys_private_and_renders_a_router_not_run_as_their_owner() -> None:
    """Keys others may read are made 0600 (only that); a router container that is not the
    keys' owner (no --user: the image's uid 10000) could not read them, so it is rendered
    again as Skupper makes it, and the keys are made private after that render."""
    podman, fake = site("rhtevan-work")
    built = parse_site_state(recorded("up", "rhtevan-work"))
    assert built.router is not None
    as_skupper_makes_it = copy.deepcopy(built.router.inspect)
    as_skupper_makes_it.setdefault("Config", {})["User"] = "1000:1000"
    as_skupper_makes_it.setdefault("HostConfig", {})["UsernsMode"] = "keep-id"
    built.router = RouterContainer(False, True, as_skupper_makes_it)
    built.login_uid = 1000
    assert podman_setup_actions(podman, built, [], tmpfs=False, restore_ca=None) == []
    built.open_keys = [OpenKey(0o640, "runtime/certs/skupper-site-server/tls.key")]
    todo = podman_setup_actions(podman, built, [], tmpfs=False, restore_ca=None)
    assert [a.name for a in todo] == ["make private keys 0600"]
    assert "skmcp_close_keys" in scripts(todo)[0] and "o+r" not in scripts(todo)[0]
    built.open_keys = []
    by_hand = copy.deepcopy(as_skupper_makes_it)
    del by_hand["Config"]["User"]
    built.router = RouterContainer(False, True, by_hand)
    names = [a.name for a in podman_setup_actions(podman, built, [], tmpfs=False, restore_ca=None)]
    assert names[:2] == ["skupper system reload", "make private keys 0600"]
    assert fake.calls == []  # planning ran nothing


@pytest.mark.parametrize(
    ("user", "userns", "login_uid", "owner"),
    [
        ("1000:1000", "keep-id", 1000, True),  # Skupper's, rootless
        ("0:0", "", 0, True),  # Skupper's, as root
        ("", "keep-id", 1000, False),  # the image's USER 10000
        ("1000:1000", "", 1000, False),  # no keep-id: uid 1000 is a subordinate id
        ("0:0", "", 1000, True),  # rootless, no keep-id: the container's root is the user
        ("1001:1001", "keep-id", 1000, False),
        ("runner", "keep-id", 1000, False),  # a name: only the image's passwd knows it
        ("", "", 0, False),  # root host, the image's uid 10000
    ],
)
def test_who_the_router_reads_as(user: str, userns: str, login_uid: int, owner: bool) -> None:
    inspect = {"Config": {"User": user}, "HostConfig": {"UsernsMode": userns}}
    assert reads_as_owner(inspect, login_uid) is owner
