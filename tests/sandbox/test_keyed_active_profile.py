"""Issue 42's first bug on a sandbox world: a provider whose model server takes a bearer
key (``<PREFIX>_MODEL_API_KEY_FILE``) and serves its *second* profile. Every operation
names the profile it serves, from the one read of ``engine/served.py``: ``up``'s start,
status's and resolve_profile's, ``down``'s stop and ``teardown``'s. Before, the site-state
read's own ``curl`` (no key: 401) left the sitemap with no model ids, and ``up``, ``down``
and ``teardown`` named the default profile while ``models`` and ``resolve_profile`` named
the served one: an agent following ``down`` stopped a model that was not running."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from product import keyed_world
from skupper_mcp.engine.core import Engine
from skupper_mcp.results import ModelAction, OperationResult
from skupper_mcp.topology import load_topology

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

KEY = "sk-i42-second-profile-5b1c07"
PROVIDER = "rhel-ai"
#: rhel-ai's profiles: g8b-fp8-spec-128k (the default) and g8b-32k, whose model this serves
SECOND_PROFILE, SECOND_MODEL = "g8b-32k", "granite-3.3-8b-instruct"


@pytest.fixture(scope="module")
def keyed_topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A one-provider world whose model server takes the key and serves the second
    profile's model; the topology names the key file."""
    root = tmp_path_factory.mktemp("keyed-second-profile")
    with keyed_world(
        root, KEY, (PROVIDER,), server_env=f"MODEL_ID={SECOND_MODEL}", providers=1
    ) as made:
        yield made.keyed


def _named(result: OperationResult) -> list[tuple[str, str]]:
    return [(a.action, a.profile) for a in result.model_actions if a.host == PROVIDER]


def _reasons(actions: list[ModelAction]) -> str:
    return "; ".join(a.reason for a in actions)


def test_up_down_and_teardown_name_the_profile_a_keyed_server_serves(
    keyed_topology: Path,
) -> None:
    async def run() -> None:
        async with Engine(load_topology(keyed_topology)) as engine:
            assert (await engine.setup()).ok
            up = await engine.up()
            assert up.ok, up.summary
            assert _named(up) == [("start", SECOND_PROFILE)], _reasons(up.model_actions)
            assert "active" in _reasons(up.model_actions)

            status = await engine.status()
            assert [(a.action, a.profile) for a in status.model_actions] == [
                ("status", SECOND_PROFILE)
            ]
            listener = next(li for li in status.listeners if li.provider == PROVIDER)
            assert listener.model_ids == [SECOND_MODEL]
            resolved = await engine.resolve(PROVIDER)
            assert (resolved.profile, resolved.profile_source) == (SECOND_PROFILE, "active")

            down = await engine.down()
            assert down.ok, down.summary
            assert _named(down) == [("stop", SECOND_PROFILE)], _reasons(down.model_actions)

            # up again from stopped: the keyed read goes through the route up brought up
            again = await engine.up()
            assert again.ok, again.summary
            assert _named(again) == [("start", SECOND_PROFILE)], _reasons(again.model_actions)

            removed = await engine.teardown()
            assert removed.ok, removed.summary
            assert _named(removed) == [("stop", SECOND_PROFILE)], _reasons(removed.model_actions)
            results = [up, down, again, removed]
            assert all(KEY not in r.model_dump_json() for r in results)

    asyncio.run(run())
