"""Issue 45's done-when: each export, as written and with no hand edit, works in the real
tool it is for, against a keyed sandbox world (its model servers want a bearer key, as vLLM
``--api-key``): the tool lists the models and completes a chat through the VAN.

- ``env`` with the openai Python client (a test dependency): ``source`` the file, then
  ``OpenAI()`` with no argument; the key is read from the topology's key file.
- ``litellm`` with the LiteLLM proxy (``litellm --config FILE``): heavy, so not a test
  dependency; the test runs where ``litellm`` is on PATH or ``SKMCP_LITELLM`` names it
  (``python -m venv V && V/bin/pip install 'litellm[proxy]'``), and skips saying so where
  it is not. The user sets exactly what the export's header says: ``LITELLM_MASTER_KEY`` and
  the key variable.

- ``opencode`` with opencode (``opencode models``, ``opencode run``) and ``continue`` with
  Continue's ``cn -p``: npm packages, not test dependencies; each test runs where the tool is
  on PATH or ``SKMCP_OPENCODE`` / ``SKMCP_CN`` names it (``npm install opencode-ai@1.18.33
  @continuedev/cli@1.5.47`` in a directory of its own: its ``node_modules/.bin``), and skips
  saying so where it is not. opencode fetches its ``@ai-sdk/openai-compatible`` from the
  npm registry the first time it runs a chat.

Goose is not installable here: its files are checked against its source's format in
tests/test_exports.py.
"""

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

from client_tools import free_port, litellm, litellm_proxy, npm_tool
from product import KeyedWorld, cli, keyed_world, set_up_and_up
from skupper_sandbox.layout import env_prefix

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

KEY = "sk-i45-tools-key-51c0a7"
MASTER_KEY = "sk-i45-litellm-master-8e1f"
PROVIDER = "rhel-ai"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedWorld]:
    with keyed_world(tmp_path_factory.mktemp("tools"), KEY, (PROVIDER,), providers=1) as made:
        set_up_and_up(made.keyed)
        yield made


def _served_id(keyed: KeyedWorld) -> str:
    model_id = keyed.world.hosts[PROVIDER].default_model_id
    assert model_id is not None
    return model_id


_OPENAI_CHAT = """
import json
from openai import OpenAI

client = OpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY, as the export set them
ids = [m.id for m in client.models.list()]
answer = client.chat.completions.create(
    model=ids[0], messages=[{"role": "user", "content": "say hello"}], max_tokens=16
)
print(json.dumps({"ids": ids, "content": answer.choices[0].message.content}))
"""


def test_the_env_export_sourced_drives_the_openai_client(keyed: KeyedWorld, tmp_path: Path) -> None:
    pytest.importorskip("openai", reason="the openai client is not installed (make venv)")
    exported = tmp_path / "models.env"
    done = cli(keyed.keyed, "models", "--export", "env", "--output", str(exported))
    assert done.returncode == 0, done.stderr
    assert KEY not in exported.read_text()
    script = tmp_path / "chat.py"
    script.write_text(_OPENAI_CHAT)
    run = subprocess.run(
        ["/bin/sh", "-c", f". {shlex.quote(str(exported))} && exec \"$0\" \"$1\"",
         sys.executable, str(script)],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},  # no key variable set
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert answer["ids"] == [_served_id(keyed)]
    assert answer["content"]


def test_the_litellm_export_as_written_starts_the_proxy_which_lists_and_chats(
    keyed: KeyedWorld, tmp_path: Path
) -> None:
    command_name = litellm()
    config = tmp_path / "config.yaml"
    done = cli(keyed.keyed, "models", "--export", "litellm", "--output", str(config))
    assert done.returncode == 0, done.stderr
    variable = f"{env_prefix(PROVIDER)}MODEL_API_KEY"
    assert f"${variable}" in done.stderr and "$LITELLM_MASTER_KEY" in done.stderr
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of its cost map
        "LITELLM_MASTER_KEY": MASTER_KEY,  # what the header says to set
        variable: KEY,
    }
    command = [command_name, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    unset = {k: v for k, v in env.items() if k != "LITELLM_MASTER_KEY"}
    stopped = subprocess.run(command, env=unset, capture_output=True, text=True, timeout=180)
    assert stopped.returncode != 0  # the header's variable unset: it says so and stops
    assert "master key" in (stopped.stdout + stopped.stderr).lower()
    log = tmp_path / "litellm.log"
    with litellm_proxy(command, env, log) as base:
        headers = {"Authorization": f"Bearer {MASTER_KEY}"}
        listed = httpx.get(f"{base}/v1/models", headers=headers, timeout=30)
        assert listed.status_code == 200, listed.text
        assert [m["id"] for m in listed.json()["data"]] == [_served_id(keyed)]
        chat = httpx.post(
            f"{base}/v1/chat/completions",
            headers=headers,
            json={"model": _served_id(keyed), "messages": [{"role": "user", "content": "hi"}]},
            timeout=60,
        )
        assert chat.status_code == 200, chat.text
        assert chat.json()["choices"][0]["message"]["content"]
        # without the master key: refused (LiteLLM 1.108.7 answers 500 with no database)
        refused = httpx.get(f"{base}/v1/models", timeout=30)
        assert refused.status_code >= 400 and "data" not in refused.text
    assert KEY not in log.read_text()


def test_the_opencode_export_as_written_lists_and_chats_in_opencode(
    keyed: KeyedWorld, tmp_path: Path
) -> None:
    opencode = npm_tool("SKMCP_OPENCODE", "opencode", "opencode-ai@1.18.33")
    config = tmp_path / "opencode.json"
    done = cli(keyed.keyed, "models", "--export", "opencode", "--output", str(config))
    assert done.returncode == 0, done.stderr
    variable = f"{env_prefix(PROVIDER)}MODEL_API_KEY"
    assert f"${variable}" in done.stderr  # what the user is told to set, and sets
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "OPENCODE_CONFIG": str(config),
        variable: KEY,
    }
    provider = f"skupper-{PROVIDER}"
    listed = subprocess.run(
        [opencode, "models", provider], env=env, cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert f"{provider}/{_served_id(keyed)}" in listed.stdout.split()
    chat = subprocess.run(
        [opencode, "run", "-m", f"{provider}/{_served_id(keyed)}", "say hello"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert chat.returncode == 0, (chat.stdout + chat.stderr)[-2000:]
    assert "You said" in chat.stdout  # the sandbox model server's answer, through the VAN


def test_the_continue_export_as_written_chats_in_cn(keyed: KeyedWorld, tmp_path: Path) -> None:
    cn = npm_tool("SKMCP_CN", "cn", "@continuedev/cli@1.5.47")
    config = tmp_path / "config.yaml"
    done = cli(keyed.keyed, "models", "--export", "continue", "--output", str(config))
    assert done.returncode == 0, done.stderr
    variable = f"{env_prefix(PROVIDER)}MODEL_API_KEY"
    assert variable in config.read_text()  # the header names it, and where Continue reads it
    secrets = tmp_path / ".continue" / ".env"
    secrets.parent.mkdir()
    secrets.write_text(f"{variable}={KEY}\n")
    chat = subprocess.run(
        [cn, "--config", str(config), "-p", "say hello"],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert chat.returncode == 0, (chat.stdout + chat.stderr)[-2000:]
    assert "You said" in chat.stdout
