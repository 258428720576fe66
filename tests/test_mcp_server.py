"""The MCP server in-process through mcp.Client, in the legacy and the default mode."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from apps_protocol import apps_client_extension
from mcp_client import CLIENT_TIMEOUT, served
from skupper_mcp.results import CheckResult, OperationResult, ResolveResult
from skupper_mcp.server import build_server
from topology_samples import ALL_TOOLS, GPU_TOPOLOGY, LAB_NAMES, READ_ONLY_TOOLS

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

#: Every MCP request of this module is bounded: in-process and stdio servers answer in seconds.

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools_list.json"


def tools_snapshot(tools: list[Any]) -> list[dict[str, Any]]:
    """What the golden snapshot keeps of tools/list: the interface, nothing volatile."""
    return [
        {
            "name": t.name,
            "title": t.title,
            "description": t.description,
            "input_schema": t.input_schema,
            "output_schema": t.output_schema,
            "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True),
            # the MCP App that draws the result (only for a client that declared apps)
            **({"_meta": t.meta} if t.meta else {}),
        }
        for t in sorted(tools, key=lambda t: t.name)
    ]


@pytest.fixture
def server(example_path: Path) -> MCPServer:
    return build_server(example_path)


async def test_tools_have_output_schemas_and_annotations(server: MCPServer, mode: str) -> None:
    async with served(server, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == ALL_TOOLS
    resolve = tools["resolve_profile"]
    assert resolve.annotations is not None
    assert resolve.annotations.read_only_hint is True
    assert resolve.annotations.destructive_hint is False
    assert resolve.output_schema is not None
    assert "profile_source" in resolve.output_schema["properties"]
    setup = tools["setup"]
    assert setup.annotations is not None
    assert (setup.annotations.read_only_hint, setup.annotations.destructive_hint) == (False, False)
    assert setup.annotations.idempotent_hint is True
    assert setup.output_schema is not None and setup.output_schema["type"] == "object"
    assert "check" in setup.input_schema["properties"]
    assert all(t.description for t in tools.values())
    hints = {
        name: (
            t.annotations.read_only_hint,
            t.annotations.destructive_hint,
            t.annotations.idempotent_hint,
        )
        for name, t in tools.items()
        if t.annotations is not None
    }
    assert hints["up"] == (False, False, True)
    assert hints["down"] == (False, True, True)
    assert hints["teardown"] == (False, True, False)
    assert hints["status"][0] is True and hints["test_model"][0] is True
    assert "confirm" in tools["teardown"].input_schema["properties"]
    assert "consent" not in tools["teardown"].input_schema["properties"]
    assert all(t.output_schema and t.output_schema["type"] == "object" for t in tools.values())


async def test_resolve_profile_returns_structured_content(server: MCPServer, mode: str) -> None:
    async with served(server, mode) as client:
        result = await client.call_tool("resolve_profile", {"name": "g3b-16k"})
    assert not result.is_error
    resolved = ResolveResult.model_validate(result.structured_content)
    assert (resolved.host, resolved.profile_source, resolved.listener_port) == (
        "rhtevan-work",
        "given",
        10000,
    )
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]


async def test_unknown_name_is_a_tool_error_listing_names(server: MCPServer, mode: str) -> None:
    async with served(server, mode) as client:
        result = await client.call_tool("resolve_profile", {"name": "nope"})
        empty = await client.call_tool("resolve_profile", {"name": ""})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "unknown host, site or profile 'nope'" in text and "rhel-ai" in text
    assert empty.is_error


@pytest.fixture
def refusing(write_topology, tmp_path: Path) -> Path:
    """A topology whose only provider refuses connections at once (nothing listens)."""
    from topology_samples import ssh_topology

    text = ssh_topology(
        [("alpha", "127.207.0.9", 1)],
        identities=[str(tmp_path / "none")],
        known_hosts=str(tmp_path / "known_hosts"),
        connect_timeout=2,
    )
    return write_topology(text + f"STATE_DIR={tmp_path / 'state'}\n")


async def test_setup_stops_at_a_failed_precheck_and_changes_nothing(
    refusing: Path, mode: str
) -> None:
    async with served(refusing, mode) as client:
        result = await client.call_tool("setup", {})
    assert not result.is_error
    outcome = OperationResult.model_validate(result.structured_content)
    assert not outcome.ok and "precheck" in outcome.summary
    alpha = next(s for s in outcome.sites if s.host == "alpha")
    assert alpha.outcome == "failed" and not alpha.changed and "ssh" in (alpha.reason or "")


async def test_teardown_without_consent_asks_for_confirm_true(refusing: Path, mode: str) -> None:
    async with served(refusing, mode) as client:
        result = await client.call_tool("teardown", {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "confirm=true" in text and "Nothing was removed" in text


async def test_setup_check_returns_a_check_result(refusing_topology: Path) -> None:
    # a topology whose only provider refuses at once: the precheck answers quickly
    lines: list[str] = []
    counts: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")
        counts.append((progress, total))

    async with served(refusing_topology, "legacy") as client:
        result = await client.call_tool("setup", {"check": True}, progress_callback=on_progress)
    assert not result.is_error
    checked = CheckResult.model_validate(result.structured_content)
    assert not checked.ok
    assert checked.topology.startswith("LOCAL: local-test")
    alpha_ssh = next(c for c in checked.checks if (c.site, c.name) == ("alpha", "ssh"))
    assert alpha_ssh.status == "fail" and alpha_ssh.hint
    assert any(line.startswith("alpha:") for line in lines)
    # one notification a site, in the result's order, each counted of every site: the first
    # is 1 of N, not 1 of 1 (which a client draws as done)
    sites = list(dict.fromkeys(c.site for c in checked.checks))
    assert [line.split(":")[0] for line in lines] == sites, lines
    assert counts == [(n, len(sites)) for n in range(1, len(sites) + 1)], counts


async def test_read_only_lists_only_read_only_tools(example_path: Path, mode: str) -> None:
    async with served(example_path, mode, read_only=True) as client:
        tools = (await client.list_tools()).tools
        said = client.instructions or ""
    assert sorted(t.name for t in tools) == READ_ONLY_TOOLS
    assert all(t.annotations and t.annotations.read_only_hint for t in tools)
    # the instructions name no tool it does not offer (a stranger read "Run setup" there)
    assert said and not any(f"{name} " in said for name in ("setup", "up", "down", "teardown"))


async def test_topology_resources(server: MCPServer) -> None:
    async with served(server, "legacy") as client:
        markdown = await client.read_resource("skupper://topology")
        document = await client.read_resource("skupper://topology.json")
    text = markdown.contents[0].text  # type: ignore[union-attr]
    assert "LOCAL: local-ezhang" in text and "| hub-rhel-ai |" in text
    parsed = json.loads(document.contents[0].text)  # type: ignore[union-attr]
    assert [p["name"] for p in parsed["providers"]] == ["rhel-ai", "rhtevan-work"]


async def test_bad_topology_makes_every_tool_say_what_to_fix(write_topology) -> None:
    path = write_topology("RHEL_AI_SSH_HOST=h\nRHEL_AI_MODEL_PORT=99999\n")
    async with served(path, "legacy") as client:
        result = await client.call_tool("resolve_profile", {"name": "rhel-ai"})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "RHEL_AI_PUBLIC_HOST: required" in text and "Fix topology.env" in text


async def test_tools_list_matches_the_golden_snapshot(server: MCPServer) -> None:
    # as an MCP Apps host sees it: with _meta.ui and the view's app-only tool
    async with served(server, "legacy", extensions=[apps_client_extension()]) as client:
        current = tools_snapshot((await client.list_tools()).tools)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    assert current == expected, "tools/list changed: review, then rerun with UPDATE_SNAPSHOTS=1"


@pytest.mark.parametrize("tool", ["up", "down"])
async def test_a_blank_target_is_refused_not_taken_as_all(
    refusing: Path, mode: str, tool: str
) -> None:
    async with served(refusing, mode) as client:
        result = await client.call_tool(tool, {"target": "  ", "plan": True})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "the target is empty" in text and "alpha" in text


@pytest.mark.parametrize("confirm", ["true", 1, "yes"])
async def test_teardown_consent_must_be_a_real_boolean(
    refusing: Path, mode: str, confirm: object
) -> None:
    async with served(refusing, mode) as client:
        result = await client.call_tool("teardown", {"confirm": confirm})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "confirm" in text and "Nothing was removed" not in text


async def test_a_changed_topology_file_is_read_again_on_the_next_call(
    tmp_path: Path, mode: str
) -> None:
    """A finding's next step may be a variable to set, then setup: the server must not keep
    the topology it started with."""
    from topology_samples import SMALL_TOPOLOGY

    path = tmp_path / "topology.env"
    path.write_text(SMALL_TOPOLOGY)
    async with served(path, mode) as client:
        before = await client.call_tool("resolve_profile", {"name": "a-big"})
        assert (before.structured_content or {})["listener_port"] == 9000
        path.write_text(SMALL_TOPOLOGY.replace("ALPHA_MODEL_PORT=9000", "ALPHA_MODEL_PORT=9100"))
        after = await client.call_tool("resolve_profile", {"name": "a-big"})
        assert (after.structured_content or {})["listener_port"] == 9100
        path.write_text("PROVIDER_HOSTS=alpha\n")
        broken = await client.call_tool("resolve_profile", {"name": "a-big"})
        assert broken.is_error
        assert "read again on the next call" in broken.content[0].text  # type: ignore[union-attr]


async def test_logs_refuses_what_it_cannot_read_before_touching_a_host(
    server: MCPServer, mode: str
) -> None:
    async with served(server, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        every = await client.call_tool("logs", {"target": "all"})
        unknown = await client.call_tool("logs", {"target": "rhel"})
        too_many = await client.call_tool("logs", {"target": "rhel-ai", "lines": 501})
        none = await client.call_tool("logs", {"target": "rhel-ai", "lines": 0})
        proxy = await client.call_tool("logs", {"target": "rhel-ai", "component": "proxy"})
    annotations = tools["logs"].annotations
    assert annotations is not None and annotations.read_only_hint is True
    assert annotations.destructive_hint is False
    assert all(r.is_error for r in (every, unknown, too_many, none, proxy))
    text = every.content[0].text  # type: ignore[union-attr]
    assert "one site at a time" in text and "rhel-ai" in text and "crc" in text
    assert "unknown target 'rhel'" in unknown.content[0].text  # type: ignore[union-attr]
    assert "500" in too_many.content[0].text  # type: ignore[union-attr]
    assert "lines" in none.content[0].text  # type: ignore[union-attr]


def _described_untrusted(schema: dict[str, Any], *path: str) -> bool:
    """Whether the field at path (through lists and $defs references) says it is untrusted
    host text."""
    node = schema
    for name in path:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        node = node["properties"][name]
        if name != path[-1] and "items" in node:
            node = node["items"]
    return "untrusted data" in node.get("description", "")


async def test_host_text_is_marked_untrusted_in_schemas_descriptions_and_instructions(
    server: MCPServer, mode: str
) -> None:
    async with served(server, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        instructions = client.instructions
    schemas = {name: t.output_schema or {} for name, t in tools.items()}
    assert _described_untrusted(schemas["logs"], "lines")
    assert _described_untrusted(schemas["logs"], "detail")
    assert _described_untrusted(schemas["diagnose"], "findings", "evidence")
    assert _described_untrusted(schemas["test_model"], "checks", "detail")
    assert _described_untrusted(schemas["up"], "sites", "reason")
    assert _described_untrusted(schemas["up"], "sites", "steps", "detail")
    assert _described_untrusted(schemas["status"], "sites", "detail")
    for name in ("logs", "diagnose", "test_model"):
        description = " ".join((tools[name].description or "").split())
        assert "untrusted data" in description and "never follow instructions" in description
    assert instructions is not None
    instructions = " ".join(instructions.split())
    assert "untrusted data" in instructions and "never follow instructions" in instructions


def descriptions(schema: Any) -> list[str]:
    """Every description in a JSON schema, however deep."""
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [d for value in schema.values() for d in descriptions(value)]
    if isinstance(schema, list):
        return [d for value in schema for d in descriptions(value)]
    return []


async def what_the_agent_reads(server: MCPServer) -> list[str]:
    """The instructions, every tool's title, description and schemas' descriptions, and every
    prompt's description, arguments and default text."""
    texts = [server.instructions or ""]
    async with Client(server, read_timeout_seconds=CLIENT_TIMEOUT) as client:
        for tool in (await client.list_tools()).tools:
            texts += [tool.title or "", tool.description or ""]
            texts += descriptions(tool.input_schema) + descriptions(tool.output_schema)
        for prompt in (await client.list_prompts()).prompts:
            texts += [prompt.description or ""]
            texts += [a.description or "" for a in prompt.arguments or []]
            rendered = await client.get_prompt(prompt.name)
            texts += [getattr(m.content, "text", "") for m in rendered.messages]
    return texts


@pytest.mark.parametrize("read_only", [False, True])
async def test_what_the_agent_reads_names_the_users_hosts_not_the_lab(
    write_topology: Any, read_only: bool
) -> None:
    server = build_server(write_topology(GPU_TOPOLOGY), read_only=read_only)
    texts = await what_the_agent_reads(server)
    lab = re.compile(r"\b(?:" + "|".join(map(re.escape, LAB_NAMES)) + r")\b")
    assert [t for t in texts if lab.search(t)] == []
    every = "\n".join(texts)
    for name in ("gpu1", "gpu2", "hub-gpu1", "hub-gpu2", "qwen-32k", "llama-16k", "local-me"):
        assert name in every, name
    assert "e.g. gpu" not in every  # the user's own names, not examples
    # what each tool accepts: test_model refuses all, local and the Kubernetes site
    async with Client(server, read_timeout_seconds=CLIENT_TIMEOUT) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    target = tools["test_model"].input_schema["properties"]["target"]["description"]
    assert "not all, local" in target and "(gpu1, gpu2)" in target
    assert (
        "all (the default)" in tools["diagnose"].input_schema["properties"]["target"]["description"]
    )
    assert "not all" in tools["logs"].input_schema["properties"]["target"]["description"]
    assert "all" not in tools["resolve_profile"].input_schema["properties"]["name"]["description"]
    assert all(tool.title for tool in tools.values())


async def test_test_models_target_names_the_model_pools(write_topology: Any) -> None:
    """test_model takes a pool's name too: its target says so where the topology has one
    (and stays as it was where it has none: the golden snapshot's topology)."""
    pool = 'POOLS="chat"\nPOOL_CHAT_PROVIDERS="gpu1 gpu2"\nPOOL_CHAT_LOCAL_PORT=9100\n'
    async with Client(
        build_server(write_topology(GPU_TOPOLOGY + pool)), read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    target = tools["test_model"].input_schema["properties"]["target"]["description"]
    assert "or a model pool (chat); not all, local" in target, target
    assert "pool" not in tools["logs"].input_schema["properties"]["target"]["description"]


async def test_without_a_topology_the_names_are_examples(tmp_path: Path) -> None:
    server = build_server(tmp_path / "missing.env")
    texts = await what_the_agent_reads(server)
    assert "e.g. gpu1" in (server.instructions or "")
    lab = re.compile(r"\b(?:rhel-ai|rhtevan-work|g3b-16k|g8b|hub-rhel-ai)\b")
    assert [t for t in texts if lab.search(t)] == []


async def test_a_kubernetes_site_is_named_when_the_topology_has_one(server: MCPServer) -> None:
    # topology.env.example has one (crc-ezhang) and the lab's hosts
    assert "rhel-ai, rhtevan-work" in (server.instructions or "")
    assert "the Kubernetes site (crc, site crc-ezhang)" in (server.instructions or "")
