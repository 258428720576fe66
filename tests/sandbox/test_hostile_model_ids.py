"""Issue 43 item 1 driven as the attack was: a provider's model server lists ids that a
client's configuration would expand (opencode's ``{file:~/.ssh/id_ed25519}``, Continue's
``${{ secrets.X }}``, LiteLLM's ``os.environ/X`` and ``*``). ``models --export FMT`` through
the CLI writes the honest id, leaves out each id that FMT's tool would expand, names it on
stderr and exits 0; the MCP client's ``models`` marks the same ids as ``placeholder_ids``."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client

from client_tools import free_port, litellm, litellm_proxy, npm_tool
from product import cli, set_up_and_up
from redaction_cases import HOSTILE_MODEL_IDS
from skupper_mcp.exports import FORMATS
from skupper_mcp.server import build_server
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, reachable_dir, running_world

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.spawns,
    pytest.mark.usefixtures("bounded_mcp_clients"),
]

SERVER = Path(__file__).parents[1] / "hostile_model_server.py"
PROVIDER = "rhel-ai"
HONEST = "ibm-granite/granite-3.3-8b-instruct"
IDS = [HONEST, *(case.model_id for case in HOSTILE_MODEL_IDS.values())]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with reachable_dir("hostile-ids") as shared:
        ids = shared / "ids.json"
        ids.write_text(json.dumps(IDS))
        ids.chmod(0o644)
        command = shlex.join([sys.executable, str(SERVER), "--ids", str(ids)])
        spec = WorldSpec(
            providers=1,
            kubernetes=False,
            model_server_command=command,
            model_server_volumes=(str(shared), str(SERVER.parent)),
        )
        with running_world(tmp_path_factory.mktemp("hostile-ids"), spec) as made:
            set_up_and_up(made.topology)
            yield made


def _written(path: Path) -> str:
    if path.is_dir():
        return "".join(p.read_text() for p in sorted(path.iterdir()))
    return path.read_text()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_cli_export_leaves_out_each_id_its_tool_would_expand(
    world: World, tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / ("providers" if fmt == "goose" else f"export.{fmt}")
    done = cli(world.topology, "models", "--export", fmt, "--output", str(out))
    assert done.returncode == 0, done.stderr
    written = _written(out)
    assert HONEST in written
    for name, case in HOSTILE_MODEL_IDS.items():
        if fmt in case.expanded_by:
            if len(case.model_id) > 2:
                assert case.model_id not in written, name
                assert json.dumps(case.model_id)[1:-1] not in written, name
            assert f"{PROVIDER}: model id {case.model_id!r}"[:40] in done.stderr, name
        else:
            assert f"model id {case.model_id!r} left out" not in done.stderr, name
    assert f"{PROVIDER}: serving" in done.stderr


async def test_the_mcp_models_tool_marks_the_ids_a_configuration_would_expand(
    world: World,
) -> None:
    async with Client(build_server(world.topology), read_timeout_seconds=120.0) as client:
        called = await client.call_tool("models", {})
        markdown = await client.read_resource("skupper://models")
    [row] = [r for r in called.structured_content["rows"] if r["host"] == PROVIDER]
    assert row["state"] == "serving", row
    assert row["model_ids"] == IDS
    assert row["placeholder_ids"] == IDS[1:]  # every hostile case, not the honest id
    text = markdown.contents[0].text  # type: ignore[union-attr]
    assert f"{len(IDS) - 1} id(s) a client configuration would expand" in text


def test_real_opencode_reads_the_export_without_reading_a_secret(
    world: World, tmp_path: Path
) -> None:
    """opencode 1.18.33 itself on the export: the model list holds the honest id and none of
    the secrets the hostile ids name (before, ``{file:~/.ssh/id_ed25519}`` in a model key
    became the key's text, sent as the model to that host)."""
    opencode = npm_tool("SKMCP_OPENCODE", "opencode", "opencode-ai@1.18.33")
    secret = "PRIVATE-KEY-MATERIAL-4f0c"
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_ed25519").write_text(secret + "\n")
    config = tmp_path / "opencode.json"
    done = cli(world.topology, "models", "--export", "opencode", "--output", str(config))
    assert done.returncode == 0, done.stderr
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "OPENCODE_CONFIG": str(config),
        "ANTHROPIC_API_KEY": "sk-ant-" + secret,
        "GITHUB_TOKEN": "ghp_" + secret,
    }
    listed = subprocess.run(
        [opencode, "models", f"skupper-{PROVIDER}"], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr[-2000:]
    lines = listed.stdout.splitlines()
    written = [
        HONEST,
        *(c.model_id for c in HOSTILE_MODEL_IDS.values() if "opencode" not in c.expanded_by),
    ]
    assert sorted(lines) == sorted(f"skupper-{PROVIDER}/{i}" for i in written)  # as written
    assert secret not in listed.stdout + listed.stderr


def test_the_real_litellm_proxy_lists_no_secret_and_routes_no_pattern(
    world: World, tmp_path: Path
) -> None:
    """The LiteLLM proxy itself on the export: its model list holds the honest id and what
    LiteLLM does not expand, no environment variable's value (before, an id
    ``os.environ/ANTHROPIC_API_KEY`` became a model_name holding that key, listed to every
    proxy user), and a model the export does not name is not routed to the hostile host by a
    ``*`` pattern."""
    command_name = litellm()
    secret = "sk-ant-SECRET-OF-THE-USER-9b1d"
    config = tmp_path / "config.yaml"
    done = cli(world.topology, "models", "--export", "litellm", "--output", str(config))
    assert done.returncode == 0, done.stderr
    master = "sk-hostile-ids-master-2a7e"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_MASTER_KEY": master,
        "ANTHROPIC_API_KEY": secret,
        "C": secret,  # what the every-tool id names after os.environ/
    }
    port = str(free_port())
    command = [command_name, "--config", str(config), "--host", "127.0.0.1", "--port", port]
    with litellm_proxy(command, env, tmp_path / "litellm.log") as base:
        headers = {"Authorization": f"Bearer {master}"}
        listed = httpx.get(f"{base}/v1/models", headers=headers, timeout=30)
        assert listed.status_code == 200, listed.text
        names = [m["id"] for m in listed.json()["data"]]
        written = [
            i
            for i in IDS
            if all(
                "litellm" not in c.expanded_by
                for c in HOSTILE_MODEL_IDS.values()
                if c.model_id == i
            )
        ]
        assert sorted(names) == sorted(written)
        assert secret not in listed.text
        other = httpx.post(
            f"{base}/v1/chat/completions",
            headers=headers,
            json={"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
            timeout=60,
        )
        assert other.status_code >= 400  # no pattern sends another model to the host
