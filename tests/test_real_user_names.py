"""The names of a world's real users (``skupper_sandbox.real_users``): valid for useradd,
short, one per host, and never shared by two worlds."""

from __future__ import annotations

import re

from skupper_sandbox import real_users
from skupper_sandbox.layout import provider_names

USERADD_NAME = re.compile(r"^[a-z_][a-z0-9_-]*[$]?$")


def test_every_host_of_a_world_has_a_valid_name_of_its_own_under_the_worlds_prefix() -> None:
    hosts = ["local", *provider_names(200)]
    names = [real_users.user_name("4c208aa66754", host) for host in hosts]
    assert len(set(names)) == len(names)
    for name in names:
        assert USERADD_NAME.match(name) and len(name) <= real_users.NAME_MAX
        assert name.startswith(real_users.world_prefix("4c208aa66754"))


def test_two_worlds_never_share_a_name() -> None:
    first = real_users.user_name("4c208aa66754", "rhel-ai")
    second = real_users.user_name("4c208aa66755", "rhel-ai")
    assert first != second
    assert not second.startswith(real_users.world_prefix("4c208aa66754"))
