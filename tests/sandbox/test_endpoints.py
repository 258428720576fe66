"""Issue 48 item 2 on a sandbox world: a provider with two model endpoints (a chat server
and an embeddings server, ``skupper-sandbox up --embeddings rhel-ai``) is set up, brought
up and down, listed, exported (every format names both models), tested with
``test_model HOST/ENDPOINT`` and torn down, through the CLI and the MCP client, with the
cluster site."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from mcp import Client

import product
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import EMBED_MODEL_ID, WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.spawns,
    pytest.mark.usefixtures("bounded_mcp_clients"),
]

CHAT, EMBED = "rhel-ai/chat", "rhel-ai/embed"
ROWS = {CHAT, EMBED, "rhtevan-work"}
CLIENT_TIMEOUT = 180.0


#: setup here can take minutes (a pull, a re-bootstrap) on a loaded machine
cli = functools.partial(product.cli, timeout=300)


def cli_json(topology: Path, *args: str, codes: tuple[int, ...] = (0,)) -> dict:
    done = cli(topology, "--json", *args)
    assert done.returncode in codes, (args, done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    spec = WorldSpec(
        providers=2, kubernetes=True, podman="emulated", embeddings_hosts=frozenset({"rhel-ai"})
    )
    with running_world(tmp_path_factory.mktemp("endpoints") / "world", spec) as found:
        setup = cli_json(found.topology, "setup")
        assert setup["ok"], setup["summary"]
        # setup's model actions name each endpoint's profile
        deploys = {(a["endpoint"], a["profile"]) for a in setup["model_actions"]}
        assert {(CHAT, "g8b-fp8-spec-128k"), (EMBED, "rhel-ai-embed")} <= deploys, deploys
        up = cli_json(found.topology, "up")
        assert up["ok"], up["summary"]
        yield found


def _rows(topology: Path) -> dict[str, dict]:
    return {r["host"]: r for r in cli_json(topology, "models", codes=(0, 3))["rows"]}


def test_the_topology_names_two_endpoints_each_its_own_connector_and_listeners(
    world: World,
) -> None:
    t = load_topology(world.topology)
    rhel = t.provider("rhel-ai")
    assert rhel is not None and [e.label for e in rhel.endpoints] == [CHAT, EMBED]
    assert t.kubernetes is not None and EMBED in t.kubernetes.listeners
    status = cli_json(world.topology, "status", codes=(0, 3))
    by_site: dict[str, set[str]] = {}
    for li in status["listeners"]:
        by_site.setdefault(li["site"], set()).add(li["endpoint"] or li["provider"])
    # one listener per endpoint on the local site and on the cluster site
    assert by_site[t.local.site_name] == ROWS, status["listeners"]
    assert {CHAT, EMBED} <= by_site[t.kubernetes.site_name], status["listeners"]
    cluster = {
        li["endpoint"]: li for li in status["listeners"] if li["site"] == t.kubernetes.site_name
    }
    # the cluster's controller took each endpoint's Listener (its Service is the endpoint's)
    assert cluster[EMBED]["bound"] is True, cluster[EMBED]
    assert cluster[EMBED]["service"].startswith("model-listener-rhel-ai-embed."), cluster[EMBED]
    local = {li["endpoint"]: li for li in status["listeners"] if li["site"] == t.local.site_name}
    assert local[EMBED]["state"] == "serving" and local[EMBED]["model_ids"] == [EMBED_MODEL_ID]
    assert not any(site["drift"] for site in status["sites"]), status["sites"]
    # status's model actions: one per endpoint, each with its own profile
    actions = {a["endpoint"]: a["profile"] for a in status["model_actions"] if a["endpoint"]}
    assert actions == {CHAT: "g8b-fp8-spec-128k", EMBED: "rhel-ai-embed"}


def test_models_has_a_row_per_endpoint_that_answers_at_its_url(world: World) -> None:
    rows = _rows(world.topology)
    assert set(rows) == ROWS
    assert all(r["state"] == "serving" for r in rows.values()), rows
    assert rows[EMBED]["model_ids"] == [EMBED_MODEL_ID]
    assert rows[EMBED]["endpoint"] == EMBED and rows[EMBED]["profile"] == "rhel-ai-embed"
    assert rows[CHAT]["model_ids"] == [world.hosts["rhel-ai"].default_model_id]
    assert rows[EMBED]["listener_port"] != rows[CHAT]["listener_port"]
    assert rows[EMBED]["cluster_base_url"].startswith("http://model-listener-rhel-ai-embed.")
    # what each serves: the embeddings server's id names an embeddings model
    assert (rows[EMBED]["kind"], rows[EMBED]["kind_from"]) == ("embeddings", "model id")
    assert (rows[CHAT]["kind"], rows[CHAT]["kind_from"]) == ("chat", "default")
    for row in rows.values():
        answer = httpx.get(f"{row['local_base_url']}/models", timeout=10)
        assert [m["id"] for m in answer.json()["data"]] == row["model_ids"]


def test_test_model_takes_host_slash_endpoint(world: World) -> None:
    result = cli_json(world.topology, "test-model", EMBED)
    assert (result["passed"], result["total"]) == (6, 6), result["checks"]
    assert result["endpoint"] == EMBED and result["profile"] == "rhel-ai-embed"
    container = next(c for c in result["checks"] if c["name"] == "remote container running")
    assert "hosted-model-embed" in container["detail"]
    # an embeddings server is checked on /v1/embeddings: a vector comes back (its chat
    # route answers 404, as vLLM's with a pooling model)
    checks = {c["name"]: c for c in result["checks"]}
    assert "chat completion" not in checks, checks
    assert "vector of 768 numbers" in checks["embeddings"]["detail"], checks
    chat = cli_json(world.topology, "test-model", CHAT)
    assert chat["passed"] == 6 and any(c["name"] == "chat completion" for c in chat["checks"])
    # the host alone names no one model server
    done = cli(world.topology, "test-model", "rhel-ai")
    assert done.returncode != 0 and EMBED in done.stdout + done.stderr


def test_every_export_names_both_endpoints_models(world: World, tmp_path: Path) -> None:
    chat_id = world.hosts["rhel-ai"].default_model_id
    assert chat_id is not None
    for fmt in ("env", "litellm", "opencode", "continue", "goose"):
        target = tmp_path / fmt
        done = cli(world.topology, "models", "--export", fmt, "--all", "--output", str(target))
        assert done.returncode == 0, (fmt, done.stderr)
        files = list(target.iterdir()) if target.is_dir() else [target]
        text = "".join(f.read_text() for f in files)
        assert chat_id in text and EMBED_MODEL_ID in text, (fmt, text)
    goose = sorted(f.name for f in (tmp_path / "goose").iterdir())
    assert "skupper_rhel_ai_embed.json" in goose, goose
    # the tools that have a kind are told it: LiteLLM's mode, Continue's role
    litellm = yaml.safe_load((tmp_path / "litellm").read_text())
    modes = {d["model_name"]: d["model_info"].get("mode") for d in litellm["model_list"]}
    assert modes[EMBED_MODEL_ID] == "embedding" and modes[chat_id] is None, modes
    continue_ = yaml.safe_load((tmp_path / "continue").read_text())
    roles = {m["model"]: m.get("roles") for m in continue_["models"]}
    assert roles[EMBED_MODEL_ID] == ["embed"] and roles[chat_id] is None, roles


async def test_the_mcp_tools_give_the_same_rows_and_test_the_endpoint(world: World) -> None:
    server = build_server(world.topology)
    async with Client(server, read_timeout_seconds=CLIENT_TIMEOUT) as client:
        called = await client.call_tool("models", {})
        tested = await client.call_tool("test_model", {"target": EMBED})
        resolved = await client.call_tool("resolve_profile", {"name": EMBED})
        markdown = await client.read_resource("skupper://models")
    rows = {r["host"]: r for r in called.structured_content["rows"]}
    assert set(rows) == ROWS and rows[EMBED]["state"] == "serving"
    assert tested.structured_content["passed"] == 6, tested.structured_content
    assert resolved.structured_content["profile"] == "rhel-ai-embed"
    assert resolved.structured_content["endpoint"] == EMBED
    text = markdown.contents[0].text  # type: ignore[union-attr]
    assert EMBED in text and EMBED_MODEL_ID in text


def test_diagnose_names_the_endpoint_whose_container_stopped(world: World) -> None:
    code, _, err = world.ssh("rhel-ai", "podman stop hosted-model-embed")
    assert code == 0, err
    try:
        found = cli_json(world.topology, "diagnose", "rhel-ai", codes=(0, 1, 3))
        stopped = [f for f in found["findings"] if f["id"] == "model-container-stopped"]
        assert len(stopped) == 1, found["findings"]  # the chat endpoint still serves
        [finding] = stopped
        assert EMBED in finding["symptom"] and "hosted-model-embed" in finding["symptom"]
        start = next(s for s in finding["next"] if s.get("action") == "start")
        assert start["profile"] == "rhel-ai-embed", finding["next"]
        rows = _rows(world.topology)
        assert rows[CHAT]["state"] == "serving" and rows[EMBED]["state"] != "serving", rows
    finally:
        code, _, err = world.ssh("rhel-ai", "podman start hosted-model-embed")
        assert code == 0, err


def test_the_van_view_shows_each_endpoint(world: World, tmp_path: Path) -> None:
    page = tmp_path / "status.html"
    done = cli(world.topology, "status", "--html", str(page))
    assert done.returncode in (0, 3), done.stderr
    html = page.read_text()
    assert EMBED in html and EMBED_MODEL_ID in html


def test_down_and_up_of_the_host_stop_and_start_both_endpoints(world: World) -> None:
    down = cli_json(world.topology, "down", "rhel-ai")
    assert down["ok"], down["summary"]
    stops = {(a["endpoint"], a["action"], a["profile"]) for a in down["model_actions"]}
    assert {(CHAT, "stop", "g8b-fp8-spec-128k"), (EMBED, "stop", "rhel-ai-embed")} <= stops
    rows = _rows(world.topology)
    assert rows[CHAT]["state"] == rows[EMBED]["state"] == "provider-stopped", rows
    assert rows["rhtevan-work"]["state"] == "serving"
    up = cli_json(world.topology, "up", "rhel-ai")
    assert up["ok"], up["summary"]
    verified = [s for site in up["sites"] for s in site["steps"] if s["name"] == "verify listener"]
    assert any("(embed)" in s["detail"] for s in verified), verified
    starts = {(a["endpoint"], a["profile"]) for a in up["model_actions"] if a["action"] == "start"}
    assert {(CHAT, "g8b-fp8-spec-128k"), (EMBED, "rhel-ai-embed")} <= starts, starts
    assert all(r["state"] == "serving" for r in _rows(world.topology).values())


def test_teardown_removes_both_endpoints(world: World) -> None:
    done = cli_json(world.topology, "teardown", "--yes")
    assert done["ok"], done["summary"]
    stops = {(a["endpoint"], a["profile"]) for a in done["model_actions"]}
    assert {(CHAT, "g8b-fp8-spec-128k"), (EMBED, "rhel-ai-embed")} <= stops, stops
    rows = _rows(world.topology)
    assert rows[EMBED]["state"] != "serving"
