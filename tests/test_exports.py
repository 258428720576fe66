"""The models catalog exported for the tools people use: each format parses, has the shape
its project documents, carries only serving models (unless asked) and never a key in clear.

The documented shapes are pydantic models of the fields each project documents (the
exporter's docstrings cite the documents), strict where the exporter writes: a renamed or
misspelt field fails. LiteLLM's own parser reads the LiteLLM config when litellm is
installed (it is not a test dependency: too heavy); the other projects' parsers are not
Python.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pools import chat_pool
from redaction_cases import HOSTILE_MODEL_IDS
from skupper_mcp import exports, placeholders
from skupper_mcp.exports import (
    FORMATS,
    ExportContext,
    build_export,
    render_export,
)
from skupper_mcp.placeholders import placeholder_ids
from skupper_mcp.results import ModelRow, PoolBackend

KEY_VARIABLE = "GPU1_MODEL_API_KEY"
KEY_VALUE = "sk-test-never-in-an-export-4c1d"


def _row(host: str, port: int, ids: list[str], **fields: Any) -> ModelRow:
    values: dict[str, Any] = {
        "model_ids": ids,
        "host": host,
        "profile": f"{host}-default",
        "site": f"hub-{host}",
        "listener_port": port,
        "local_base_url": f"http://127.0.0.1:{port}/v1",
        "routing_key": f"model-api-{host}",
        "state": "serving",
        "latency_ms": 12.5,
    }
    values.update(fields)
    return ModelRow(**values)


ROWS = [
    _row("gpu1", 9000, ["ibm-granite/granite-3.3-8b-instruct"], api_key_env=KEY_VARIABLE),
    _row("gpu-two", 10000, ["qwen2.5:7b", "qwen2.5:7b-lora"]),
    _row("gpu3", 10001, ["org/stopped-model"], state="provider-stopped", reason="router stopped"),
    _row("gpu4", 10002, [], state="route-up-no-model", reason="/v1/models listed no model"),
]
SERVING_IDS = ["ibm-granite/granite-3.3-8b-instruct", "qwen2.5:7b", "qwen2.5:7b-lora"]


# -- the documented shapes -------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LiteLLMParams(_Strict):
    """https://docs.litellm.ai/docs/proxy/configs: litellm_params of a deployment."""

    model: str = Field(pattern=r"^openai/.+")
    api_base: str
    api_key: str


class LiteLLMDeployment(_Strict):
    model_name: str
    litellm_params: LiteLLMParams
    model_info: dict[str, str]


class LiteLLMGeneralSettings(_Strict):
    """general_settings.master_key: read from the environment, never a key in the file."""

    master_key: Literal["os.environ/LITELLM_MASTER_KEY"]


class LiteLLMConfig(_Strict):
    model_list: list[LiteLLMDeployment]
    general_settings: LiteLLMGeneralSettings


class OpenCodeModel(_Strict):
    name: str


class OpenCodeOptions(_Strict):
    baseURL: str
    apiKey: str | None = Field(default=None, pattern=r"^\{env:[A-Za-z_][A-Za-z0-9_]*\}$")


class OpenCodeProvider(_Strict):
    """opencode's "Custom provider" (https://opencode.ai/docs/providers/#custom-provider)."""

    npm: Literal["@ai-sdk/openai-compatible"]
    name: str
    options: OpenCodeOptions
    models: dict[str, OpenCodeModel]


class OpenCodeConfig(_Strict):
    schema_: Literal["https://opencode.ai/config.json"] = Field(alias="$schema")
    provider: dict[str, OpenCodeProvider]


class ContinueModel(_Strict):
    """Continue's config.yaml models entry (https://docs.continue.dev/reference)."""

    name: str
    provider: Literal["openai"]
    model: str
    apiBase: str
    apiKey: str | None = Field(
        default=None, pattern=r"^\$\{\{ secrets\.[A-Za-z_][A-Za-z0-9_]* \}\}$"
    )


class ContinueConfig(_Strict):
    name: str
    version: str
    schema_: Literal["v1"] = Field(alias="schema")
    models: list[ContinueModel]


class GooseModel(_Strict):
    """Goose's ModelInfo: name and context_limit are required (no serde default)."""

    name: str
    context_limit: int = Field(gt=0)


class GooseProvider(_Strict):
    """Goose's DeclarativeProviderConfig (block/goose crates/goose/src/config/
    declarative_providers.rs): the fields it requires and the ones the exporter sets."""

    name: str = Field(pattern=r"^[a-z0-9_][a-z0-9_-]*$")  # validate_provider_id
    engine: Literal["openai"]
    display_name: str
    description: str | None = None
    api_key_env: str
    base_url: str = Field(pattern=r"^http://127\.0\.0\.1:[0-9]+/v1/chat/completions$")
    models: list[GooseModel]
    requires_auth: bool
    supports_streaming: bool | None = None


# -- every format ---------------------------------------------------------------------------


def _parsed(fmt: str, text: str) -> Any:
    if fmt == "env":
        return _env_assignments(text)
    return json.loads(text) if fmt in ("opencode", "goose") else yaml.safe_load(text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_parses_and_carries_only_serving_models(fmt: str) -> None:
    text = render_export(ROWS, fmt)
    _parsed(fmt, text)
    for model_id in SERVING_IDS:
        assert model_id in text
    assert "org/stopped-model" not in text
    everything = render_export(ROWS, fmt, include_all=True)
    _parsed(fmt, everything)
    assert "org/stopped-model" in everything


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_key_is_only_ever_a_reference(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VARIABLE, KEY_VALUE)
    text = render_export(ROWS, fmt)
    assert KEY_VALUE not in text
    assert KEY_VARIABLE in text


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="env, litellm, opencode, continue, goose"):
        render_export(ROWS, "vscode")


def test_a_row_without_a_model_id_is_left_out_even_with_include_all() -> None:
    hosts = [e.row.host for e in build_export(ROWS, "env", include_all=True).entries]
    assert hosts == ["gpu1", "gpu-two", "gpu3"]  # gpu4 listed none, and no profile names one
    assert [e.row.host for e in build_export(ROWS, "env").entries] == ["gpu1", "gpu-two"]


def test_an_api_key_env_that_is_no_variable_name_is_refused() -> None:
    with pytest.raises(ValidationError):
        _row("gpu1", 9000, ["m"], api_key_env="KEY; rm -rf ~")


# -- env --------------------------------------------------------------------------------------


def _env_assignments(text: str) -> list[tuple[bool, str, str]]:
    """(live, name, value) of every export line, commented out or not."""
    found = []
    for line in text.splitlines():
        live = not line.startswith("#")
        body = line if live else line[2:]
        if body.startswith("export "):
            name, _, value = body[len("export ") :].partition("=")
            found.append((live, name, value))
        else:
            assert not live or not line.strip(), f"a live line that is no export: {line!r}"
    return found


def test_env_has_one_block_per_model_and_only_the_first_is_live() -> None:
    assignments = _env_assignments(render_export(ROWS, "env"))
    assert assignments == [
        (True, "OPENAI_BASE_URL", "http://127.0.0.1:9000/v1"),
        (True, "OPENAI_API_BASE", "http://127.0.0.1:9000/v1"),
        (
            True,
            "OPENAI_API_KEY",
            f'"${{{KEY_VARIABLE}:?set {KEY_VARIABLE} to the model '
            f'API key, or {KEY_VARIABLE}_FILE in the topology}}"',
        ),
        (False, "OPENAI_BASE_URL", "http://127.0.0.1:10000/v1"),
        (False, "OPENAI_API_BASE", "http://127.0.0.1:10000/v1"),
        (False, "OPENAI_API_KEY", "EMPTY"),
    ]


def test_env_sourced_by_a_shell_gives_the_url_and_the_key_from_its_variable(
    tmp_path: Path,
) -> None:
    hostile = _row("gpu9", 9009, [f"x\n touch {tmp_path}/pwned; $(touch {tmp_path}/pwned2)"])
    script = tmp_path / "models.env"
    script.write_text(render_export([ROWS[0], hostile], "env"))
    shown = subprocess.run(
        ["/bin/sh", "-c", f'. {script}; printf "%s|%s|%s" "$OPENAI_BASE_URL" '
         '"$OPENAI_API_BASE" "$OPENAI_API_KEY"'],
        env={"PATH": os.environ["PATH"], KEY_VARIABLE: KEY_VALUE},
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )  # fmt: skip
    assert shown.stdout == f"http://127.0.0.1:9000/v1|http://127.0.0.1:9000/v1|{KEY_VALUE}"
    assert shown.stderr == ""
    assert not list(tmp_path.glob("pwned*"))  # a model id stays inside its comment


def test_env_with_nothing_serving_says_so() -> None:
    text = render_export(ROWS[2:], "env")
    assert _env_assignments(text) == []
    assert "no model is serving" in text


# -- LiteLLM ----------------------------------------------------------------------------------


def test_litellm_routes_each_model_id_to_its_url_in_the_documented_shape() -> None:
    config = LiteLLMConfig.model_validate(yaml.safe_load(render_export(ROWS, "litellm")))
    routes = {
        (d.model_name, d.litellm_params.model, d.litellm_params.api_base, d.litellm_params.api_key)
        for d in config.model_list
    }
    assert routes == {
        (
            "ibm-granite/granite-3.3-8b-instruct",
            "openai/ibm-granite/granite-3.3-8b-instruct",
            "http://127.0.0.1:9000/v1",
            f"os.environ/{KEY_VARIABLE}",
        ),
        ("qwen2.5:7b", "openai/qwen2.5:7b", "http://127.0.0.1:10000/v1", "EMPTY"),
        ("qwen2.5:7b-lora", "openai/qwen2.5:7b-lora", "http://127.0.0.1:10000/v1", "EMPTY"),
    }
    assert len({d.model_info["id"] for d in config.model_list}) == 3  # ids unique


def test_one_id_on_two_providers_is_a_deployment_named_by_each_host() -> None:
    """Issue 43 item 7: one model_name over both would give a host that lists another's id
    a share of its traffic; each deployment is named by its host, and the export says so."""
    rows = [_row("gpu1", 9000, ["shared/model"]), _row("gpu2", 10000, ["shared/model", "own"])]
    export = build_export(rows, "litellm")
    config = LiteLLMConfig.model_validate(yaml.safe_load(export.text))
    routes = [
        (d.model_name, d.litellm_params.model, d.litellm_params.api_base) for d in config.model_list
    ]
    assert routes == [
        ("shared/model@gpu1", "openai/shared/model", "http://127.0.0.1:9000/v1"),
        ("shared/model@gpu2", "openai/shared/model", "http://127.0.0.1:10000/v1"),
        ("own", "openai/own", "http://127.0.0.1:10000/v1"),
    ]
    [note] = export.left_out
    assert (note.host, note.model_id, note.renamed) == ("gpu1, gpu2", "shared/model", True)
    assert "# not as listed:" in export.text and "named <id>@<host>" in export.text


def test_a_name_that_would_still_collide_is_left_out() -> None:
    """An id written to look like a host-named one cannot take that name over."""
    rows = [
        _row("gpu1", 9000, ["m"]),
        _row("gpu2", 10000, ["m"]),
        _row("evil", 10001, ["m@gpu1", "fine"]),
    ]
    export = build_export(rows, "litellm")
    config = LiteLLMConfig.model_validate(yaml.safe_load(export.text))
    assert [d.model_name for d in config.model_list] == ["m@gpu2", "fine"]
    left = {(n.host, n.model_id) for n in export.left_out if not n.renamed}
    assert left == {("gpu1", "m"), ("evil", "m@gpu1")}


_LITELLM_CHECK = textwrap.dedent(
    """
    import json, os, sys
    import yaml
    from litellm import Router

    config = yaml.safe_load(open(sys.argv[1]))
    router = Router(model_list=config["model_list"])
    deployments = [
        {k: e["litellm_params"][k] for k in ("model", "api_base", "api_key")}
        for e in router.model_list
    ]
    print(json.dumps({"names": sorted(router.get_model_names()), "deployments": deployments}))
    """
)


def test_litellm_own_router_loads_the_config(tmp_path: Path) -> None:
    """LiteLLM's Router, which the proxy builds from config.yaml's model_list, reads the
    export and resolves ``os.environ/NAME`` from the environment. In a process of its own:
    litellm takes seconds to import, and without LITELLM_LOCAL_MODEL_COST_MAP it would
    fetch its cost map from the internet."""
    pytest.importorskip("litellm", reason="litellm is not installed (not a test dependency)")
    config = tmp_path / "config.yaml"
    config.write_text(render_export(ROWS, "litellm"))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", KEY_VARIABLE: KEY_VALUE}
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _LITELLM_CHECK, str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["names"] == sorted(SERVING_IDS)
    assert {
        "model": "openai/ibm-granite/granite-3.3-8b-instruct",
        "api_base": "http://127.0.0.1:9000/v1",
        "api_key": KEY_VALUE,  # resolved by LiteLLM from os.environ/NAME
    } in loaded["deployments"]


# -- opencode, Continue, Goose ----------------------------------------------------------------


def test_opencode_has_one_openai_compatible_provider_per_host() -> None:
    config = OpenCodeConfig.model_validate(json.loads(render_export(ROWS, "opencode")))
    assert list(config.provider) == ["skupper-gpu1", "skupper-gpu-two"]
    gpu1, two = config.provider.values()
    assert gpu1.options.baseURL == "http://127.0.0.1:9000/v1"
    assert gpu1.options.apiKey == f"{{env:{KEY_VARIABLE}}}"
    assert list(gpu1.models) == ["ibm-granite/granite-3.3-8b-instruct"]
    assert two.options.apiKey is None  # no key: opencode sends none
    assert list(two.models) == ["qwen2.5:7b", "qwen2.5:7b-lora"]


def test_continue_has_one_openai_model_per_id() -> None:
    config = ContinueConfig.model_validate(yaml.safe_load(render_export(ROWS, "continue")))
    assert [(m.model, m.apiBase) for m in config.models] == [
        ("ibm-granite/granite-3.3-8b-instruct", "http://127.0.0.1:9000/v1"),
        ("qwen2.5:7b", "http://127.0.0.1:10000/v1"),
        ("qwen2.5:7b-lora", "http://127.0.0.1:10000/v1"),
    ]
    assert config.models[0].apiKey == f"${{{{ secrets.{KEY_VARIABLE} }}}}"
    assert config.models[1].apiKey is None
    assert len({m.name for m in config.models}) == 3


def test_goose_has_one_declarative_provider_file_per_host() -> None:
    files = json.loads(render_export(ROWS, "goose"))
    assert list(files) == ["skupper_gpu1.json", "skupper_gpu_two.json"]
    gpu1, two = (GooseProvider.model_validate(v) for v in files.values())
    assert (gpu1.name, gpu1.api_key_env, gpu1.requires_auth) == ("skupper_gpu1", KEY_VARIABLE, True)
    assert (two.name, two.api_key_env, two.requires_auth) == ("skupper_gpu_two", "", False)
    assert two.base_url == "http://127.0.0.1:10000/v1/chat/completions"
    assert [m.name for m in two.models] == ["qwen2.5:7b", "qwen2.5:7b-lora"]


def _strings(value: Any) -> list[str]:
    """Every key and string value in a parsed document."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("fmt", ["litellm", "opencode", "continue", "goose"])
def test_a_hostile_model_id_stays_one_string(fmt: str) -> None:
    hostile = 'evil"\n  api_key: stolen\n}{"x": 1, "apiKey": "stolen"'
    parsed = _parsed(fmt, render_export([_row("gpu1", 9000, [hostile])], fmt))
    strings = _strings(parsed)
    assert hostile in strings  # the id, whole, as a value or a key
    assert "stolen" not in strings and "x" not in strings


@pytest.mark.parametrize("fmt", ["litellm", "continue", "goose"])
def test_an_id_a_server_lists_twice_is_exported_once(fmt: str) -> None:
    text = render_export([_row("gpu1", 9000, ["twice", "other", "twice"])], fmt)
    strings = _strings(_parsed(fmt, text))
    assert strings.count("twice") == 1  # the model name (LiteLLM), model (Continue), name (Goose)


def _pool_row(state: str) -> ModelRow:
    backends = [
        PoolBackend(provider="gpu1", profile="granite", routing_key="model-pool-chat", live=True),
        PoolBackend(provider="gpu2", profile="granite", routing_key="model-pool-chat", live=False),
    ]
    pool = chat_pool(backends, state="degraded")
    return _row("chat", 9100, ["pooled/granite"], state=state, site="local-test", pool=pool)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_serving_pool_is_one_entry_with_the_pools_one_url(fmt: str) -> None:
    text = render_export([*ROWS, _pool_row("serving")], fmt)
    # env names the one URL twice, as OPENAI_BASE_URL and OPENAI_API_BASE
    assert text.count("127.0.0.1:9100") == (2 if fmt == "env" else 1)
    assert "pooled/granite" in text
    assert "127.0.0.1:9100" not in render_export([*ROWS, _pool_row("provider-stopped")], fmt)


def test_env_says_a_pool_is_served_by_its_members() -> None:
    text = render_export([_pool_row("serving")], "env")
    assert "pool chat (any over gpu1, gpu2), serving" in text
    assert "export OPENAI_BASE_URL=http://127.0.0.1:9100/v1" in text


# -- ids a tool would expand (issue 43 item 1) -------------------------------------------------


@pytest.mark.parametrize("case", sorted(HOSTILE_MODEL_IDS))
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_id_its_tool_would_expand_is_left_out_and_named(fmt: str, case: str) -> None:
    hostile = HOSTILE_MODEL_IDS[case]
    rows = [_row("evil", 9000, ["honest/model", hostile.model_id]), _row("gpu2", 10000, ["ok"])]
    export = build_export(rows, fmt)
    written = "".join(export.files.values())
    assert "honest/model" in written and "ok" in written  # the rest of the row stays
    if fmt in hostile.expanded_by:
        if fmt != "env":
            assert hostile.model_id not in _strings(
                [_parsed(fmt, t) for t in export.files.values()]
            )
        if len(hostile.model_id) > 2:  # "*" is in our own words too
            assert hostile.model_id not in written
            assert json.dumps(hostile.model_id)[1:-1] not in written  # nor escaped
        [note] = export.left_out
        assert (note.host, note.model_id) == ("evil", hostile.model_id)
        assert repr(hostile.model_id)[:8] in note.said()  # stderr names it
        assert len(hostile.model_id) < 3 or hostile.model_id not in note.in_header()
        if fmt in ("litellm", "continue"):
            assert "# not as listed:" in written and "evil: a model id left out" in written
    else:
        assert export.left_out == []  # no tool of this format expands it: written as it is
    assert placeholder_ids([hostile.model_id, "ok"]) == [hostile.model_id]


def test_a_row_whose_every_id_is_left_out_is_no_entry() -> None:
    rows = [_row("evil", 9000, ["{env:HOME}", "{file:/etc/passwd}"]), _row("gpu2", 10000, ["ok"])]
    export = build_export(rows, "opencode")
    assert list(json.loads(export.text)["provider"]) == ["skupper-gpu2"]
    assert [n.model_id for n in export.left_out] == ["{env:HOME}", "{file:/etc/passwd}"]


def test_a_placeholder_the_filter_missed_is_refused_not_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The last line: with the per-id filter gone, the rendered file is still refused."""
    monkeypatch.setattr(placeholders, "PLACEHOLDERS", {})
    for fmt, model_id in [
        ("opencode", "x{file:~/.ssh/id_ed25519}"),
        ("continue", "${{ secrets.GITHUB_TOKEN }}"),
        ("litellm", "os.environ/ANTHROPIC_API_KEY"),
    ]:
        with pytest.raises(ValueError, match="placeholder that is not ours"):
            build_export([_row("evil", 9000, [model_id])], fmt)


# -- what is left out, and --all (issue 45 item 4) -----------------------------------------------

CONTEXT = ExportContext(
    key_files={KEY_VARIABLE: Path("/home/u/keys/gpu1 model.key")},
    profiles={"gpu3": {"g3-4k": "org/stopped-model-4k"}, "gpu4": {"g4": "org/gpu4-model"}},
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_names_what_it_left_out_and_why(fmt: str) -> None:
    export = build_export(ROWS, fmt, context=CONTEXT)
    assert {(n.host, n.model_id) for n in export.left_out} == {("gpu3", None), ("gpu4", None)}
    assert all("not serving (--all writes it)" in n.why for n in export.left_out)
    if fmt in ("env", "litellm", "continue"):  # the formats with comments say it in the file
        assert "gpu3: all of it left out: provider-stopped" in export.files[""]


def test_all_writes_a_stopped_row_commented_with_the_id_its_profile_names() -> None:
    rows = [ROWS[0], _row("gpu3", 10001, [], profile="g3-4k", state="provider-stopped")]
    env = build_export(rows, "env", include_all=True, context=CONTEXT).text
    assert "# org/stopped-model-4k: gpu3 (profile g3-4k, site hub-gpu3), provider-stopped" in env
    assert "# export OPENAI_BASE_URL=http://127.0.0.1:10001/v1" in env
    assert _env_assignments(env)[0] == (True, "OPENAI_BASE_URL", "http://127.0.0.1:9000/v1")
    for fmt in ("litellm", "continue"):
        text = build_export(rows, fmt, include_all=True, context=CONTEXT).text
        parsed = yaml.safe_load(text)
        assert "org/stopped-model-4k" not in _strings(parsed)  # only in a comment
        assert "# not serving now (--all): uncomment an entry when it serves" in text
        assert "org/stopped-model-4k" in text
        # uncommented as the note says, the file still parses and lists the stopped model
        uncommented = re.sub(r"(?m)^# (?=[ -]|[a-z_]+:$)", "", text)
        assert "org/stopped-model-4k" in _strings(yaml.safe_load(uncommented))

    serving = rows[1].model_copy(update={"state": "serving", "model_ids": ["org/stopped-model-4k"]})
    shape = build_export([rows[0], serving], "env", include_all=True, context=CONTEXT).text
    # the same blocks whether the host serves or not: only the comment says its state
    assert [a[1:] for a in _env_assignments(env)] == [a[1:] for a in _env_assignments(shape)]


@pytest.mark.parametrize("fmt,key", [("litellm", "model_list"), ("continue", "models")])
def test_all_with_nothing_serving_says_which_line_its_commented_entries_replace(
    fmt: str, key: str
) -> None:
    """With no live entry the list is ``[]`` (a null would be refused by the tools), and the
    commented entries bring the key with them: the file a user makes of them parses."""
    stopped = _row("gpu3", 10001, [], profile="g3-4k", state="provider-stopped")
    text = build_export([stopped], fmt, include_all=True, context=CONTEXT).text
    assert yaml.safe_load(text)[key] == []
    assert f"replace `{key}: []` with these lines" in text
    replaced = re.sub(r"(?m)^# (?=[ -]|[a-z_]+:$)", "", text.replace(f"{key}: []\n", ""))
    listed = yaml.safe_load(replaced)[key]
    assert "org/stopped-model-4k" in _strings(listed)


def test_env_live_block_is_the_first_serving_row_never_a_stopped_one() -> None:
    stopped_first = [ROWS[2], ROWS[1]]
    assignments = _env_assignments(render_export(stopped_first, "env", include_all=True))
    assert next(a for a in assignments if a[0]) == (
        True,
        "OPENAI_BASE_URL",
        "http://127.0.0.1:10000/v1",
    )


def test_all_leaves_out_a_row_whose_id_nothing_names() -> None:
    export = build_export([ROWS[3]], "env", include_all=True)
    [note] = export.left_out
    assert "no profile names one" in note.why


# -- the env export's key (issue 45 item 3) ------------------------------------------------------


def test_env_reads_the_key_from_the_topologys_file_when_sourced(tmp_path: Path) -> None:
    key_file = tmp_path / "it's a key"  # a quote and a space in the path
    key_file.write_text(KEY_VALUE + "\n")
    context = ExportContext(key_files={KEY_VARIABLE: key_file})
    script = tmp_path / "models.env"
    script.write_text(render_export(ROWS, "env", context=context))
    assert KEY_VALUE not in script.read_text()
    shown = subprocess.run(
        ["/bin/sh", "-c", f'. "{script}"; printf "%s" "$OPENAI_API_KEY"'],
        env={"PATH": os.environ["PATH"]},  # no key variable: the file is read
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    assert shown.stdout == KEY_VALUE


def test_env_without_the_keys_file_fails_loudly_naming_the_variable(tmp_path: Path) -> None:
    script = tmp_path / "models.env"
    script.write_text(render_export(ROWS, "env"))
    done = subprocess.run(
        ["/bin/sh", "-c", f'. "{script}"; echo reached'],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert done.returncode != 0 and "reached" not in done.stdout
    assert f"set {KEY_VARIABLE} to the model API key" in done.stderr


# -- LiteLLM's master key (issue 45 item 1) ------------------------------------------------------


def test_litellm_reads_its_master_key_from_the_environment_and_says_how() -> None:
    text = render_export(ROWS, "litellm")
    config = LiteLLMConfig.model_validate(yaml.safe_load(text))
    assert config.general_settings.master_key == "os.environ/LITELLM_MASTER_KEY"
    assert "export LITELLM_MASTER_KEY=sk-" in text  # the header says how to set it


# -- Goose: one file per provider, each field as Goose reads it (issue 45 item 2) ----------------


def _goose(rows: list[ModelRow], context: ExportContext | None = None) -> dict[str, Any]:
    files = build_export(rows, "goose", context=context).files
    return {name: json.loads(text) for name, text in files.items()}


def test_goose_writes_one_file_per_provider_each_a_provider_not_a_map() -> None:
    files = _goose(ROWS[:2])
    assert list(files) == ["skupper_gpu1.json", "skupper_gpu_two.json"]
    for content in files.values():
        GooseProvider.model_validate(content)  # required fields at the top of each file


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("name", "skupper_gpu1"),
        ("engine", "openai"),
        ("display_name", "gpu1 (Skupper)"),
        ("description", "Models of gpu1 through the Skupper network"),
        ("api_key_env", KEY_VARIABLE),
        ("base_url", "http://127.0.0.1:9000/v1/chat/completions"),
        ("models", [{"name": "ibm-granite/granite-3.3-8b-instruct", "context_limit": 4096}]),
        ("requires_auth", True),
        ("supports_streaming", True),
    ],
)
def test_goose_field(field: str, expected: Any) -> None:
    row = ROWS[0].model_copy(update={"profile": "g8b-4k"})
    [content] = _goose([row]).values()
    assert content[field] == expected


def test_goose_context_limit_comes_from_the_profile_that_serves_the_id() -> None:
    context = ExportContext(profiles={"gpu-two": {"q-16k": "qwen2.5:7b", "q": "qwen2.5:7b-lora"}})
    [content] = _goose([ROWS[1]], context).values()
    assert [(m["name"], m["context_limit"]) for m in content["models"]] == [
        ("qwen2.5:7b", 16384),
        ("qwen2.5:7b-lora", exports.GOOSE_CONTEXT_LIMIT),  # the profile does not say
    ]
