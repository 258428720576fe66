"""The models catalog as configuration for the tools people point at a model server.

``render_export(rows, fmt)`` turns ``ModelRow``s into the text one tool reads: shell
variables (``env``), a LiteLLM proxy ``config.yaml`` (``litellm``), an ``opencode.json``
provider block (``opencode``), a Continue ``config.yaml`` (``continue``) or Goose custom
providers (``goose``). Each renderer's docstring cites the document its format follows.

A pool's row (``ModelRow.pool``) is one entry like any other: its URL is the pool's one
port, which fails over among its providers.

Pure: no I/O. Only serving rows are exported unless ``include_all``; a row without a model
id (its server listed none) is left out, since every format is keyed by the id. A model
API key appears only as a reference to the environment variable that holds it
(``ModelRow.api_key_env``), in the form the tool documents, never in clear.

Model ids come from the model server (untrusted): the YAML and JSON formats quote them
through their serialisers, and the ``env`` format writes them only inside comments, with
anything but printable ASCII replaced, so no id can add a line or a command.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable
from typing import Any

import yaml

from skupper_mcp.models import ModelRow
from skupper_mcp.vocabulary import EXPORT_FORMATS

FORMATS: tuple[str, ...] = EXPORT_FORMATS

#: What an OpenAI client is given as its key when the server needs none: the OpenAI SDKs
#: refuse to start without one, and vLLM's own examples pass this word
#: (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html).
NO_KEY = "EMPTY"
#: Goose's ``context_limit`` is required and the model server does not say it; Goose gives
#: a custom provider it creates itself the same value (``ModelInfo::new(name, 128000)`` in
#: ``create_custom_provider``, block/goose crates/goose/src/config/declarative_providers.rs).
GOOSE_CONTEXT_LIMIT = 128000

_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")
_COMMENT_LIMIT = 200


def render_export(rows: Iterable[ModelRow], fmt: str, include_all: bool = False) -> str:
    """The configuration ``fmt`` (one of ``FORMATS``) for ``rows``: only serving rows
    unless ``include_all``. Raises ``ValueError`` for an unknown format."""
    renderer = _RENDERERS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return renderer(exported_rows(rows, include_all))


def exported_rows(rows: Iterable[ModelRow], include_all: bool = False) -> list[ModelRow]:
    """The rows an export carries: serving ones (every one with ``include_all``) that
    name at least one model id."""
    return [r for r in rows if r.model_ids and (include_all or r.state == "serving")]


def render_env(rows: list[ModelRow]) -> str:
    """Shell lines for the OpenAI SDKs and the tools built on them: ``OPENAI_BASE_URL``
    (openai-python and openai-node, https://github.com/openai/openai-python#configuring-the-http-client
    and ``src/openai/_client.py``: ``base_url`` defaults to ``$OPENAI_BASE_URL``),
    ``OPENAI_API_BASE`` (the older name LangChain and LiteLLM still read,
    https://docs.litellm.ai/docs/providers/openai_compatible) and ``OPENAI_API_KEY``.

    One process takes one base URL, so each model is a block of its own: the first is
    live (``source`` the file, or ``eval "$(...)"``), the others are commented out, to be
    swapped in. The key is ``"${NAME}"``, expanded by the shell from the variable that
    holds it; a model that needs no key gets ``EMPTY`` (never the user's own
    ``OPENAI_API_KEY``, which would go to the model server)."""
    lines = [
        "# skupper-mcp models --export env: the OpenAI-compatible base URL of each model on",
        "# this machine. A process takes one base URL: the first block is live, uncomment",
        "# another (and comment this one) to call that model instead.",
    ]
    if not rows:
        lines.append("# no model is serving: nothing to export")
    for index, row in enumerate(rows):
        prefix = "" if index == 0 else "# "
        key = f'"${{{row.api_key_env}}}"' if row.api_key_env else NO_KEY
        url = shlex.quote(row.local_base_url)
        lines += [
            "",
            f"# {_comment(', '.join(_ids(row)))}: {_served_by(row)}, {row.state}",
            f"{prefix}export OPENAI_BASE_URL={url}",
            f"{prefix}export OPENAI_API_BASE={url}",
            f"{prefix}export OPENAI_API_KEY={key}",
        ]
    return "\n".join(lines) + "\n"


def litellm_config(rows: list[ModelRow]) -> dict[str, Any]:
    """A LiteLLM proxy ``config.yaml``: ``model_list`` with one deployment per model id,
    ``model_name`` the id clients send, ``litellm_params.model`` ``openai/<id>`` (LiteLLM's
    route to any OpenAI-compatible server), ``api_base`` the local URL and ``api_key``
    ``os.environ/NAME`` (LiteLLM reads the key from that variable). Documents:
    https://docs.litellm.ai/docs/proxy/configs ("Config.yaml": model_list, litellm_params,
    ``os.environ/``) and https://docs.litellm.ai/docs/providers/openai_compatible.

    Two providers that serve one id give two deployments of one ``model_name``, which
    LiteLLM's router balances between (and fails over, its ``num_retries``)."""
    deployments = []
    for row in rows:
        for model_id in _ids(row):
            params: dict[str, Any] = {
                "model": f"openai/{model_id}",
                "api_base": row.local_base_url,
                "api_key": f"os.environ/{row.api_key_env}" if row.api_key_env else NO_KEY,
            }
            deployments.append(
                {
                    "model_name": model_id,
                    "litellm_params": params,
                    "model_info": {"id": f"skupper-{row.host}-{model_id}"},
                }
            )
    return {"model_list": deployments}


def render_litellm(rows: list[ModelRow]) -> str:
    """``litellm_config`` as YAML, for ``litellm --config FILE``."""
    header = "# skupper-mcp models --export litellm: a LiteLLM proxy config.yaml\n"
    return header + _yaml(litellm_config(rows))


def opencode_config(rows: list[ModelRow]) -> dict[str, Any]:
    """An ``opencode.json`` with one custom provider per provider host: ``npm``
    ``@ai-sdk/openai-compatible``, ``options.baseURL`` the local URL, ``options.apiKey``
    ``{env:NAME}`` (opencode's variable substitution) when a key is needed, and ``models``
    keyed by the ids ``/v1/models`` reports. Document: opencode's "Custom provider"
    (anomalyco/opencode packages/web/src/content/docs/providers.mdx, https://opencode.ai/docs/providers/#custom-provider;
    ``{env:...}``: https://opencode.ai/docs/config/#env-vars); schema
    https://opencode.ai/config.json. It type-checks as opencode's ``Config``
    (``@opencode-ai/sdk`` 1.19.6 ``dist/v2/gen/types.gen.d.ts``, generated from that
    schema; checked with ``tsc --strict``, by hand: the suite runs no Node)."""
    providers: dict[str, Any] = {}
    for row in rows:
        options: dict[str, str] = {"baseURL": row.local_base_url}
        if row.api_key_env:
            options["apiKey"] = f"{{env:{row.api_key_env}}}"
        providers[f"skupper-{row.host}"] = {
            "npm": "@ai-sdk/openai-compatible",
            "name": f"{row.host} (Skupper)",
            "options": options,
            "models": {model_id: {"name": model_id} for model_id in _ids(row)},
        }
    return {"$schema": "https://opencode.ai/config.json", "provider": providers}


def render_opencode(rows: list[ModelRow]) -> str:
    """``opencode_config`` as JSON, to merge into ``opencode.json``."""
    return json.dumps(opencode_config(rows), indent=2) + "\n"


def continue_config(rows: list[ModelRow]) -> dict[str, Any]:
    """A Continue ``config.yaml`` (schema v1): one ``models`` entry per model id with
    ``provider: openai``, ``model`` the id, ``apiBase`` the local URL and ``apiKey``
    ``${{ secrets.NAME }}``. Documents: https://docs.continue.dev/reference (config.yaml:
    name, version, schema, models) and https://docs.continue.dev/customize/model-providers/top-level/openai
    ("OpenAI API compatible providers": apiBase). Continue resolves ``secrets.NAME`` from
    ``~/.continue/.env`` or the workspace's ``.continue/.env`` (not from the process
    environment, continuedev/continue#5902): put ``NAME=<key>`` there. It passes
    Continue's own ``configYamlSchema`` (``@continuedev/config-yaml`` 1.42.0; checked by
    hand: the suite runs no Node)."""
    models = []
    for row in rows:
        for model_id in _ids(row):
            entry: dict[str, Any] = {
                "name": f"{model_id} ({row.host})",
                "provider": "openai",
                "model": model_id,
                "apiBase": row.local_base_url,
            }
            if row.api_key_env:
                entry["apiKey"] = f"${{{{ secrets.{row.api_key_env} }}}}"
            models.append(entry)
    return {"name": "skupper-mcp models", "version": "0.0.1", "schema": "v1", "models": models}


def render_continue(rows: list[ModelRow]) -> str:
    """``continue_config`` as YAML, for ``~/.continue/config.yaml``."""
    header = "# skupper-mcp models --export continue: a Continue config.yaml\n"
    return header + _yaml(continue_config(rows))


def goose_providers(rows: list[ModelRow]) -> dict[str, dict[str, Any]]:
    """Goose declarative custom providers, one per provider host, by file name (each is a
    file of its own in ``~/.config/goose/custom_providers/``): ``engine`` ``openai``,
    ``base_url`` the local chat completions URL, ``models`` with ``name`` and
    ``context_limit``, ``api_key_env`` the variable that holds the key (Goose's
    ``Config::get_secret`` reads the environment first, crates/goose/src/config/base.rs)
    and ``requires_auth`` whether one is needed.
    Document: Goose's ``DeclarativeProviderConfig`` and ``ModelInfo``
    (block/goose crates/goose/src/config/declarative_providers.rs,
    crates/goose/src/providers/base.rs; a shipped example:
    crates/goose/src/providers/declarative/llama_swap.json) and
    https://block.github.io/goose/docs/getting-started/providers#configure-custom-provider."""
    files: dict[str, dict[str, Any]] = {}
    for row in rows:
        name = f"skupper_{row.host.replace('-', '_')}"
        files[f"{name}.json"] = {
            "name": name,
            "engine": "openai",
            "display_name": f"{row.host} (Skupper)",
            "description": f"Models of {row.host} through the Skupper network",
            "api_key_env": row.api_key_env or "",
            "base_url": f"{row.local_base_url}/chat/completions",
            "models": [
                {"name": model_id, "context_limit": GOOSE_CONTEXT_LIMIT} for model_id in _ids(row)
            ],
            "requires_auth": row.api_key_env is not None,
            "supports_streaming": True,
        }
    return files


def render_goose(rows: list[ModelRow]) -> str:
    """``goose_providers`` as one JSON object: each key is a file name, each value that
    file's content."""
    return json.dumps(goose_providers(rows), indent=2) + "\n"


def _served_by(row: ModelRow) -> str:
    """Who answers a row's URL: its provider, or a pool's members (one URL, failover)."""
    if row.pool is not None:
        members = ", ".join(b.provider for b in row.pool.backends)
        return f"pool {row.host} ({row.pool.strategy} over {members})"
    return f"{row.host} (profile {row.profile}, site {row.site})"


def _ids(row: ModelRow) -> list[str]:
    """The row's model ids once each, in the server's order (a server may list one twice)."""
    return list(dict.fromkeys(row.model_ids))


def _yaml(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=False)


def _comment(text: str) -> str:
    """``text`` safe inside a shell comment: one line of printable ASCII, cut short."""
    flat = _UNPRINTABLE.sub("?", text)
    return flat if len(flat) <= _COMMENT_LIMIT else flat[: _COMMENT_LIMIT - 3] + "..."


_RENDERERS: dict[str, Callable[[list[ModelRow]], str]] = {
    "env": render_env,
    "litellm": render_litellm,
    "opencode": render_opencode,
    "continue": render_continue,
    "goose": render_goose,
}
