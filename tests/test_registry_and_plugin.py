"""What the repository publishes beside the package: ``server.json`` for the MCP Registry and
the Claude Code plugin under ``plugin/``. Their versions are the package's; the plugin's
SKILL.md is the packaged one with the plugin's tool prefix; ``server.json`` holds the
Registry's documented fields.

The Registry's published schema (https://static.modelcontextprotocol.io/schemas/2025-12-11/
server.schema.json) cannot be fetched here, so ``REGISTRY_RULES`` restates the parts of it
that apply to a PyPI stdio package (required fields, the name pattern, the description
length, a package version that is exact, the transport and the environment variables), as
the schema and https://github.com/modelcontextprotocol/registry/blob/main/docs/reference/
server-json/official-registry-requirements.md state them. Set ``MCP_SERVER_SCHEMA`` to a
copy of the published schema to validate against it too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from skupper_mcp import __version__, data
from skupper_mcp.clients import SERVER_NAME, plugin_skill
from skupper_mcp.errors import ConfigError
from skupper_mcp.topology.discovery import ENV_VARIABLE, find_topology_path

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "plugin"
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

_INPUT = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "isRequired": {"type": "boolean"},
        "isSecret": {"type": "boolean"},
        "format": {"enum": ["string", "number", "boolean", "filepath"]},
        "value": {"type": "string"},
        "default": {"type": "string"},
    },
}
REGISTRY_RULES: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["$schema", "name", "description", "version"],
    "properties": {
        "$schema": {"const": SCHEMA_URL},
        "name": {
            "type": "string",
            "pattern": r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$",
            "minLength": 3,
            "maxLength": 200,
        },
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "maxLength": 255},
        "packages": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["registryType", "identifier", "version", "transport"],
                "properties": {
                    "registryType": {"enum": ["npm", "pypi", "nuget", "oci", "mcpb"]},
                    "registryBaseUrl": {"type": "string", "format": "uri"},
                    "identifier": {"type": "string", "minLength": 1},
                    "version": {"type": "string", "minLength": 1, "not": {"const": "latest"}},
                    "runtimeHint": {"type": "string"},
                    "transport": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {"type": {"enum": ["stdio"]}},
                    },
                    "packageArguments": {
                        "type": "array",
                        "items": {
                            "allOf": [
                                _INPUT,
                                {
                                    "required": ["type"],
                                    "properties": {"type": {"enum": ["positional", "named"]}},
                                },
                            ]
                        },
                    },
                    "environmentVariables": {
                        "type": "array",
                        "items": {
                            "allOf": [
                                _INPUT,
                                {
                                    "required": ["name"],
                                    "properties": {"name": {"type": "string"}},
                                },
                            ]
                        },
                    },
                },
            },
        },
    },
}


def _pyproject_version() -> str:
    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def _server_json() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((ROOT / "server.json").read_text())
    return document


def test_server_json_version_is_the_packages() -> None:
    server = _server_json()
    assert server["version"] == _pyproject_version() == __version__
    (package,) = server["packages"]
    assert package["version"] == server["version"]
    assert package["identifier"] == "skupper-mcp"
    assert package["registryType"] == "pypi"


def test_server_json_follows_the_registry_rules() -> None:
    jsonschema.validate(_server_json(), REGISTRY_RULES)
    (package,) = _server_json()["packages"]
    variables = {v["name"] for v in package["environmentVariables"]}
    assert "SKUPPER_MCP_TOPOLOGY" in variables


def test_registry_rules_reject_what_the_registry_rejects() -> None:
    bad = _server_json()
    bad["packages"][0]["version"] = "latest"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, REGISTRY_RULES)
    nameless = {k: v for k, v in _server_json().items() if k != "name"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(nameless, REGISTRY_RULES)


@pytest.mark.skipif(not os.environ.get("MCP_SERVER_SCHEMA"), reason="no copy of the schema")
def test_server_json_validates_against_the_published_schema() -> None:
    schema = json.loads(Path(os.environ["MCP_SERVER_SCHEMA"]).read_text())
    jsonschema.validate(_server_json(), schema)


def test_readme_carries_the_registry_ownership_marker() -> None:
    # the Registry checks a PyPI package's README for "mcp-name: <server.json name>"
    readme = (ROOT / "README.md").read_text()
    assert f"mcp-name: {_server_json()['name']}" in readme


def _plugin_name() -> str:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["version"] == _pyproject_version()
    name: str = manifest["name"]
    return name


def test_plugin_declares_the_server_under_its_name() -> None:
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert list(servers) == [SERVER_NAME]
    assert servers[SERVER_NAME]["command"] == "skupper-mcp"


def test_plugin_skill_is_the_packaged_skill_with_the_plugin_prefix() -> None:
    """One source: the plugin's copy is generated from src/skupper_mcp/data/SKILL.md. To
    regenerate: python -c "from skupper_mcp import data; from skupper_mcp.clients import
    plugin_skill; print(plugin_skill(data.skill(), 'skupper-mcp'), end='')"
    > plugin/skills/skupper-mcp/SKILL.md"""
    plugin = _plugin_name()
    shipped = (PLUGIN / "skills" / "skupper-mcp" / "SKILL.md").read_text()
    assert shipped == plugin_skill(data.skill(), plugin)
    allowed = re.search(r"^allowed-tools: (.*)$", shipped, re.MULTILINE)
    assert allowed is not None
    prefix = f"mcp__plugin_{plugin}_{SERVER_NAME}__"
    tools = allowed.group(1).split()
    assert tools and all(tool.startswith(prefix) for tool in tools), tools
    assert f"mcp__{SERVER_NAME}__" not in shipped


def _claude() -> str | None:
    return os.environ.get("CLAUDE_BIN") or shutil.which("claude")


def _claude_at_home(home: Path, topology: Path, *options: str) -> Callable[..., str]:
    """Claude Code's CLI with ``options``, run in (and with its HOME at) ``home``, finding
    ``skupper-mcp`` on PATH and the topology in SKUPPER_MCP_TOPOLOGY, logged out: each call
    must succeed, and answers its output."""
    claude = _claude()
    assert claude is not None
    bin_dir = home / "bin"
    bin_dir.mkdir()
    (bin_dir / "skupper-mcp").symlink_to(Path(sys.executable).parent / "skupper-mcp")
    environ = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "SKUPPER_MCP_TOPOLOGY": str(topology),
    }
    environ.pop("ANTHROPIC_API_KEY", None)

    def run(*argv: str) -> str:
        done = subprocess.run(
            [claude, *options, *argv],
            env=environ,
            cwd=home,
            text=True,
            capture_output=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    return run


@pytest.mark.slow
@pytest.mark.skipif(_claude() is None, reason="Claude Code's CLI is not installed (CLAUDE_BIN)")
def test_claude_code_loads_the_plugin_and_its_server_connects(
    tmp_path: Path, example_path: Path
) -> None:
    """``claude --plugin-dir plugin``: the plugin's skill and server load, and the server
    (``skupper-mcp`` from PATH, the topology from SKUPPER_MCP_TOPOLOGY) connects."""
    run = _claude_at_home(tmp_path, example_path, "--plugin-dir", str(PLUGIN))
    listed = run("mcp", "list")
    plugin = _plugin_name()
    line = next(x for x in listed.splitlines() if x.startswith(f"plugin:{plugin}:{SERVER_NAME}:"))
    assert "Connected" in line, listed
    details = run("plugin", "details", plugin)
    assert re.search(r"Skills \(1\)\s+skupper-mcp", details), details
    assert re.search(rf"MCP servers \(1\)\s+{SERVER_NAME}", details), details


def test_the_marketplace_offers_the_plugin() -> None:
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = marketplace["plugins"]
    assert entry["name"] == _plugin_name()
    assert (ROOT / entry["source"]).resolve() == PLUGIN


@pytest.mark.slow
@pytest.mark.skipif(_claude() is None, reason="Claude Code's CLI is not installed (CLAUDE_BIN)")
def test_claude_code_installs_the_plugin_from_the_repository_marketplace(
    tmp_path: Path, example_path: Path
) -> None:
    """What a user runs: ``claude plugin marketplace add`` (the repository) and ``claude
    plugin install skupper-mcp@skupper-mcp``; then ``claude mcp list`` has it connected."""
    run = _claude_at_home(tmp_path, example_path)
    plugin = _plugin_name()
    run("plugin", "marketplace", "add", str(ROOT))
    run("plugin", "install", f"{plugin}@{plugin}")
    listed = run("mcp", "list")
    line = next(x for x in listed.splitlines() if x.startswith(f"plugin:{plugin}:{SERVER_NAME}:"))
    assert "Connected" in line, listed


def test_server_json_says_where_the_topology_is_read_as_the_code_does(tmp_path: Path) -> None:
    # issue 43: server.json said ./topology.env was read by default; it is not (issue 31)
    (package,) = _server_json()["packages"]
    [variable] = [v for v in package["environmentVariables"] if v["name"] == ENV_VARIABLE]
    text = variable["description"]
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "topology.env").write_text("")
    with pytest.raises(ConfigError, match="read only when named"):
        find_topology_path(None, environ={}, cwd=cwd, home=home)
    assert "default ./topology.env" not in text
    assert "./topology.env in the current folder is read only when named" in text
    user = home / ".config" / "skupper-mcp" / "topology.env"
    user.parent.mkdir(parents=True)
    user.write_text("")
    assert find_topology_path(None, environ={}, cwd=cwd, home=home) == user
    assert "default ~/.config/skupper-mcp/topology.env" in text
