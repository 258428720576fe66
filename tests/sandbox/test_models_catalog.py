"""Issue 33's done-when on a sandbox world whose providers run the model server as vLLM
--api-key does (a bearer key on every /v1 route) and without /health, as Ollama and LM
Studio serve: after up, ``skupper-mcp models --json`` lists every served id at a URL whose
GET /models answers it; test_model passes 6/6 once ``<PREFIX>_MODEL_API_KEY_FILE`` names
the key and without it fails naming that variable; after ``down`` of one provider its row
says the provider is stopped; the key is in no result, log or export."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client

from product import PODMAN_KINDS, KeyedWorld, cli, keyed_world, podman_kind, set_up_and_up
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import env_prefix

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.spawns,
    pytest.mark.usefixtures("bounded_mcp_clients"),
]

KEY = "sk-i33-world-key-7d2e91"
PROVIDERS = ("rhel-ai", "rhtevan-work")
CLIENT_TIMEOUT = 120.0


@pytest.fixture(scope="module", params=PODMAN_KINDS)
def keyed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KeyedWorld]:
    """The keyed world on each podman kind: the emulation, and this machine's real podman
    (the world a user's hosts are; skipped where it cannot run a container), set up and up
    with the topology that names no key file."""
    kind = podman_kind(request)
    root = tmp_path_factory.mktemp(f"keyed-models-{kind}")
    with keyed_world(
        root, KEY, PROVIDERS, server_args=("--no-health",), providers=2, podman=kind
    ) as made:
        set_up_and_up(made.plain)
        yield made


def models_json(topology: Path) -> dict[str, dict]:
    done = cli(topology, "models", "--json")
    assert KEY not in done.stdout + done.stderr
    assert done.returncode in (0, 3), done.stderr
    return {row["host"]: row for row in json.loads(done.stdout)["rows"]}


def test_without_the_key_test_model_fails_naming_the_key_file_variable(keyed: KeyedWorld) -> None:
    done = cli(keyed.plain, "--json", "test-model", "rhel-ai")
    assert done.returncode == 1, done.stdout + done.stderr
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["listener port"]["passed"]
    for name in ("API health", "model id"):
        assert not checks[name]["passed"]
        assert "RHEL_AI_MODEL_API_KEY_FILE" in checks[name]["detail"], checks[name]
    assert checks["remote container running"]["passed"]  # not "the container is stopped"
    rows = models_json(keyed.plain)
    assert rows["rhel-ai"]["state"] == "route-up-no-model", rows
    assert "HTTP 401" in rows["rhel-ai"]["reason"]
    # as test_model does: the variable for the key's file, and the one a client reads
    assert "RHEL_AI_MODEL_API_KEY_FILE" in rows["rhel-ai"]["reason"]
    assert rows["rhel-ai"]["api_key_env"] == "RHEL_AI_MODEL_API_KEY"


def test_diagnose_tells_a_refused_key_and_resolve_reads_through_the_key(keyed: KeyedWorld) -> None:
    plain = cli(keyed.plain, "--json", "diagnose", "rhel-ai")
    found = {f["id"]: f for f in json.loads(plain.stdout)["findings"]}
    assert "model-key-refused" in found, found
    assert not {"model-container-stopped", "model-not-serving"} & set(found)
    refused = found["model-key-refused"]
    assert "RHEL_AI_MODEL_API_KEY_FILE" in refused["fix"]
    assert any(s.get("variable") == "RHEL_AI_MODEL_API_KEY_FILE" for s in refused["next"])
    with_key = cli(keyed.keyed, "--json", "--log-level", "DEBUG", "diagnose", "rhel-ai")
    assert KEY not in with_key.stdout + with_key.stderr
    ids = {f["id"] for f in json.loads(with_key.stdout)["findings"]}
    assert not {i for i in ids if i.startswith("model-")}, ids
    resolved = json.loads(cli(keyed.keyed, "--json", "resolve", "rhel-ai").stdout)
    assert resolved["profile_source"] == "active", resolved


def test_with_the_key_test_model_passes_six_of_six(keyed: KeyedWorld) -> None:
    for provider in PROVIDERS:
        done = cli(keyed.keyed, "--json", "--log-level", "DEBUG", "test-model", provider)
        assert KEY not in done.stdout + done.stderr
        result = json.loads(done.stdout)
        assert (result["passed"], result["total"]) == (6, 6), result["checks"]
        health = next(c for c in result["checks"] if c["name"] == "API health")
        assert "/health answered HTTP 404" in health["detail"]


def test_models_lists_every_served_id_at_a_url_that_answers_it(keyed: KeyedWorld) -> None:
    rows = models_json(keyed.keyed)
    assert set(rows) == set(PROVIDERS)
    listener_host = load_topology(keyed.keyed).local.listener_host
    for provider, row in rows.items():
        entry = keyed.world.hosts[provider]
        assert row["state"] == "serving", row
        assert row["model_ids"] == [entry.default_model_id]
        assert row["local_base_url"] == f"http://{listener_host}:{row['listener_port']}/v1"
        assert row["api_key_env"] == f"{env_prefix(provider)}MODEL_API_KEY"
        assert row["latency_ms"] is not None and row["latency_ms"] >= 0
        answer = httpx.get(
            f"{row['local_base_url']}/models",
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=10,
        )
        assert [m["id"] for m in answer.json()["data"]] == row["model_ids"]


def test_the_exports_reference_the_key_and_never_hold_it(keyed: KeyedWorld, tmp_path: Path) -> None:
    env = cli(keyed.keyed, "models", "--export", "env")
    assert env.returncode == 0, env.stderr
    # read from the topology's key file when sourced: the client needs no second variable
    assert f'export OPENAI_API_KEY="$(cat -- {shlex.quote(str(keyed.key_file))})"' in env.stdout
    sourced = subprocess.run(
        ["/bin/sh", "-c", 'eval "$1"; printf %s "$OPENAI_API_KEY"', "sh", env.stdout],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    assert sourced.stdout == KEY
    assert f"$RHEL_AI_MODEL_API_KEY (the key in {keyed.key_file})" in env.stderr
    out = tmp_path / "litellm.yaml"
    written = cli(keyed.keyed, "models", "--export", "litellm", "--output", str(out))
    assert written.returncode == 0, written.stderr
    text = out.read_text()
    assert (out.stat().st_mode & 0o777) == 0o600
    assert "os.environ/RHEL_AI_MODEL_API_KEY" in text and "os.environ/RHTEVAN_WORK" in text
    for fmt in ("env", "litellm", "opencode", "continue", "goose"):
        target = tmp_path / f"all-{fmt}"
        done = cli(keyed.keyed, "models", "--export", fmt, "--all", "--output", str(target))
        assert done.returncode == 0, (fmt, done.stderr)
        files = list(target.iterdir()) if target.is_dir() else [target]
        assert KEY not in done.stdout + done.stderr + "".join(f.read_text() for f in files), fmt


async def test_the_mcp_tool_and_resource_give_the_same_rows(keyed: KeyedWorld) -> None:
    server = build_server(keyed.keyed)
    async with Client(server, read_timeout_seconds=CLIENT_TIMEOUT) as client:
        called = await client.call_tool("models", {})
        markdown = await client.read_resource("skupper://models")
        as_json = await client.read_resource("skupper://models.json")
    rows = called.structured_content["rows"]
    assert {r["host"]: r["state"] for r in rows} == dict.fromkeys(PROVIDERS, "serving")
    text = markdown.contents[0].text  # type: ignore[union-attr]
    assert "| Model |" in text and "serving" in text
    document = json.loads(as_json.contents[0].text)  # type: ignore[union-attr]
    assert {r["host"] for r in document["rows"]} == set(PROVIDERS)
    assert KEY not in json.dumps(called.structured_content) + text


def test_after_down_of_a_provider_its_row_says_it_is_stopped(keyed: KeyedWorld) -> None:
    down = cli(keyed.keyed, "down", "rhtevan-work")
    assert down.returncode == 0, down.stdout + down.stderr
    rows = models_json(keyed.keyed)
    assert rows["rhtevan-work"]["state"] == "provider-stopped", rows["rhtevan-work"]
    assert rows["rhtevan-work"]["model_ids"] == []
    assert rows["rhel-ai"]["state"] == "serving"
    serving_only = cli(keyed.keyed, "models", "--export", "env")
    assert "rhtevan-work: all of it left out: provider-stopped" in serving_only.stdout
    assert "rhtevan-work: provider-stopped" in serving_only.stderr
    assert cli(keyed.keyed, "models").returncode == 3  # without --export: its own codes


def test_an_export_with_a_stopped_provider_exits_0_and_keeps_its_block(
    keyed: KeyedWorld, tmp_path: Path
) -> None:
    """Issue 45 items 4 and 5 (after the test above stopped rhtevan-work): the file is
    written, so `models --export FMT --output FILE && tool --config FILE` goes on; --all
    keeps the stopped provider's block, commented, with the id its profile names."""
    out = tmp_path / "models.env"
    done = cli(keyed.keyed, "models", "--export", "env", "--all", "--output", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    stopped = keyed.world.hosts["rhtevan-work"].default_model_id
    assert f"# {stopped}: rhtevan-work" in text and "provider-stopped" in text
    assert text.count("\nexport OPENAI_BASE_URL=") == 1  # the serving provider's block is live
    assert "rhtevan-work: provider-stopped" in done.stderr
