"""The models catalog as configuration for the tools people point at a model server.

``build_export(rows, fmt)`` turns ``ModelRow``s into the files one tool reads: shell
variables (``env``), a LiteLLM proxy ``config.yaml`` (``litellm``), an ``opencode.json``
provider block (``opencode``), a Continue ``config.yaml`` (``continue``) or one Goose
custom provider file per provider (``goose``, a directory). Each renderer's docstring cites
the document its format follows. ``render_export`` is the text of a one-file format.

A pool's row (``ModelRow.pool``) is one entry like any other: its URL is the pool's one
port, which fails over among its providers.

Pure: no I/O. Only serving rows are exported unless ``include_all``, which adds every other
row with the ids it lists, else the id its topology profile names (``ExportContext``): in
the env and YAML formats as a commented block, so that the file keeps its shape when a host
stops. A row with no id at all is left out. Whatever is left out is named, with why, in
``Export.left_out``: the header of a format with comments says it, the CLI says it on
stderr. A model API key appears only as a reference to the environment variable that holds
it, or (``env``) as a read of the key file the topology names, at the time the file is
sourced: never in clear.

Model ids come from the model server (untrusted). The YAML and JSON formats quote them
through their serialisers, and the ``env`` format writes them only inside comments, with
anything but printable ASCII replaced, so no id can add a line or a command. Quoting is not
enough: the tools expand placeholders in the file's text, or in its values, before they use
it. An id holding a syntax its tool expands is left out (``placeholder``): opencode's
``{env:X}`` and ``{file:PATH}``, anywhere in the text (a private key in every request's
``model`` field, sent to the host that listed it); Continue's ``${{ ... }}``, anywhere in
the text; LiteLLM's ``os.environ/`` (a value starting with it is read from the environment
or a secret manager; ``os.environ/oidc/...`` fetches a token) and ``*`` (a ``model_name``
pattern that would route other models' requests to that host). As a last line, a rendered
file with any placeholder that is not our own key reference is refused (``ValueError``).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skupper_mcp.placeholders import placeholder
from skupper_mcp.results import ModelRow
from skupper_mcp.vocabulary import EXPORT_FORMATS

FORMATS: tuple[str, ...] = EXPORT_FORMATS
#: The formats written as a directory of files (``--output DIR``), not one file.
DIRECTORY_FORMATS: tuple[str, ...] = ("goose",)

#: What an OpenAI client is given as its key when the server needs none: the OpenAI SDKs
#: refuse to start without one, and vLLM's own examples pass this word
#: (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html).
NO_KEY = "EMPTY"
#: Goose's ``context_limit`` when the profile does not say one (``-<N>k``): the value Goose
#: gives a custom provider it creates itself (``ModelInfo::new(name, 128000)`` in
#: ``create_custom_provider``, block/goose crates/goose/src/config/declarative_providers.rs).
GOOSE_CONTEXT_LIMIT = 128000
#: The variable the LiteLLM proxy reads its master key from (``general_settings``): the
#: proxy refuses to start without one (``UnsafeMasterKeyError``), and LiteLLM wants it to
#: start with ``sk-`` (https://docs.litellm.ai/docs/proxy/virtual_keys).
LITELLM_MASTER_KEY = "LITELLM_MASTER_KEY"

_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")
_COMMENT_LIMIT = 200
#: A profile whose name ends in ``-<N>k`` serves an ``N`` Ki-token context (``g3b-4k``).
_CONTEXT_SUFFIX = re.compile(r"-([0-9]{1,4})k$")


@dataclass(frozen=True)
class ExportContext:
    """What the topology says that the rows do not: the key file behind each key
    variable (``api_key_env`` -> path, for ``env``'s read at source time) and each row's
    profiles (host or pool -> profile -> model id: a stopped row's known id, and Goose's
    context limit)."""

    key_files: Mapping[str, Path] = field(default_factory=dict)
    profiles: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class LeftOut:
    """A row, or one model id of it, that an export does not carry, and why (our words)."""

    host: str
    why: str
    model_id: str | None = None  # None: the whole row
    renamed: bool = False  # not left out: written under another name, said as this is

    def said(self) -> str:
        """One line for stderr: the id shown as printable ASCII, cut short."""
        what = f"model id {_comment(repr(self.model_id))} " if self.model_id is not None else ""
        done = "named by host" if self.renamed else "left out"
        return f"{self.host}: {what}{done}: {self.why}"

    def in_header(self) -> str:
        """One line for a file's header: never the id itself (host text in a file that its
        tool expands), only that one was left out."""
        what = "a model id" if self.model_id is not None else "all of it"
        done = "named by host" if self.renamed else "left out"
        return f"{self.host}: {what} {done}: {self.why}"


@dataclass(frozen=True)
class Entry:
    """A row as an export writes it: the ids it carries and whether it is live (serving)
    or written only to keep the file's shape (``--all``: commented where comments exist)."""

    row: ModelRow
    ids: list[str]
    live: bool


@dataclass(frozen=True)
class Export:
    """An export: its files (one named ``""`` for a one-file format; by file name for a
    directory format), what it left out and why, and the key variables it reads."""

    fmt: str
    files: dict[str, str]
    entries: list[Entry]
    left_out: list[LeftOut]

    @property
    def text(self) -> str:
        """The one file of a one-file format."""
        return self.files[""]

    @property
    def keys(self) -> list[str]:
        return sorted({e.row.api_key_env for e in self.entries if e.row.api_key_env})


def build_export(
    rows: Iterable[ModelRow],
    fmt: str,
    include_all: bool = False,
    context: ExportContext | None = None,
) -> Export:
    """The export ``fmt`` (one of ``FORMATS``) of ``rows``. Raises ``ValueError`` for an
    unknown format."""
    renderer = _RENDERERS.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    ctx = context or ExportContext()
    left_out: list[LeftOut] = []
    entries = _entries(list(rows), fmt, include_all, ctx, left_out)
    files = renderer(entries, ctx, left_out)
    for text in files.values():
        _only_our_placeholders(fmt, text, entries)
    return Export(fmt, files, entries, left_out)


def render_export(
    rows: Iterable[ModelRow],
    fmt: str,
    include_all: bool = False,
    context: ExportContext | None = None,
) -> str:
    """The text of a one-file format; a directory format's files as one JSON object by
    file name (to look at: ``--output DIR`` writes them)."""
    export = build_export(rows, fmt, include_all, context)
    if fmt in DIRECTORY_FORMATS:
        return json.dumps({n: json.loads(t) for n, t in export.files.items()}, indent=2) + "\n"
    return export.text


def _entries(
    rows: list[ModelRow],
    fmt: str,
    include_all: bool,
    ctx: ExportContext,
    left_out: list[LeftOut],
) -> list[Entry]:
    entries = []
    for row in rows:
        live = row.state == "serving" and bool(row.model_ids)
        if not live and not include_all:
            left_out.append(LeftOut(row.host, f"{row.state}, not serving (--all writes it)"))
            continue
        ids = _ids(row) if row.model_ids else _known_ids(row, ctx)
        if not ids:
            left_out.append(
                LeftOut(row.host, f"{row.state}: its server listed no id and no profile names one")
            )
            continue
        kept = []
        for model_id in ids:
            why = placeholder(fmt, model_id)
            if why is None:
                kept.append(model_id)
            else:
                left_out.append(LeftOut(row.host, why, model_id))
        if kept:
            entries.append(Entry(row, kept, live))
    return entries


def _known_ids(row: ModelRow, ctx: ExportContext) -> list[str]:
    """A row without ids (its server did not answer): the id its profile names."""
    known = ctx.profiles.get(row.host, {}).get(row.profile)
    return [known] if known else []


# -- env -------------------------------------------------------------------------------------


def render_env(entries: list[Entry], ctx: ExportContext, left_out: list[LeftOut]) -> str:
    """Shell lines for the OpenAI SDKs and the tools built on them: ``OPENAI_BASE_URL``
    (openai-python and openai-node, https://github.com/openai/openai-python#configuring-the-http-client
    and ``src/openai/_client.py``: ``base_url`` defaults to ``$OPENAI_BASE_URL``),
    ``OPENAI_API_BASE`` (the older name LangChain and LiteLLM still read,
    https://docs.litellm.ai/docs/providers/openai_compatible) and ``OPENAI_API_KEY``.

    One process takes one base URL, so each model is a block of its own: the first serving
    chat model (else the first serving one) is live (``source`` the file, or
    ``eval "$(...)"``), the others are commented out, to be swapped in. The key is read
    when the file is sourced from the key file the topology names (``$(cat -- 'FILE')``:
    a client needs no second variable); a key whose file the topology does not name is
    ``${NAME:?...}``, which stops the ``source`` with a message naming the variable when it
    is unset. A model that needs no key gets ``EMPTY``
    (never the user's own ``OPENAI_API_KEY``, which would go to the model server)."""
    lines = [
        "# skupper-mcp models --export env: the OpenAI-compatible base URL of each model on",
        "# this machine. A process takes one base URL: a serving chat model's block is live,",
        "# uncomment another (and comment this one) to call that model instead.",
        *_header_notes(left_out),
    ]
    # the live block is a chat model's where one serves: what a client of OPENAI_BASE_URL
    # calls first is a chat completion, which an embeddings server refuses
    serving = [i for i, e in enumerate(entries) if e.live]
    live = next((i for i in serving if entries[i].row.kind == "chat"), None)
    live = serving[0] if live is None and serving else live
    if live is None:
        lines.append("# no model is serving: no block is live")
    for index, entry in enumerate(entries):
        row = entry.row
        prefix = "" if index == live else "# "
        url = shlex.quote(row.local_base_url)
        lines += [
            "",
            f"# {_comment(', '.join(entry.ids))}: {_served_by(row)}, {row.state}"
            + ("" if row.kind == "chat" else f", {row.kind}"),
            f"{prefix}export OPENAI_BASE_URL={url}",
            f"{prefix}export OPENAI_API_BASE={url}",
            f"{prefix}export OPENAI_API_KEY={_env_key(row, ctx)}",
        ]
    return "\n".join(lines) + "\n"


def _env_key(row: ModelRow, ctx: ExportContext) -> str:
    name = row.api_key_env
    if name is None:
        return NO_KEY
    path = ctx.key_files.get(name)
    if path is not None:
        return f'"$(cat -- {shlex.quote(str(path))})"'
    return f'"${{{name}:?set {name} to the model API key, or {name}_FILE in the topology}}"'


# -- LiteLLM ---------------------------------------------------------------------------------


def litellm_config(
    entries: list[Entry], left_out: list[LeftOut] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A LiteLLM proxy ``config.yaml`` (and the deployments of rows that are not serving,
    to write commented): ``model_list`` with one deployment per model id,
    ``litellm_params.model`` ``openai/<id>`` (LiteLLM's route to any OpenAI-compatible
    server), ``api_base`` the local URL and ``api_key`` ``os.environ/NAME`` (LiteLLM reads
    the key from that variable); ``general_settings.master_key``
    ``os.environ/LITELLM_MASTER_KEY``. Documents: https://docs.litellm.ai/docs/proxy/configs
    ("Config.yaml": model_list, litellm_params, general_settings, ``os.environ/``) and
    https://docs.litellm.ai/docs/providers/openai_compatible.

    ``model_name`` is the id clients send. An id that more than one provider lists would be
    one name that LiteLLM balances over every deployment of it: a host that lists another's
    id would take a share of its traffic, prompts and all. Each such deployment is named
    ``<id>@<host>`` instead (a pool is the way to balance one model over hosts); a name that
    is still not unique (an id written to look like one) is left out."""
    notes = left_out if left_out is not None else []
    hosts_of: dict[str, set[str]] = {}
    for entry in entries:
        for model_id in entry.ids:
            hosts_of.setdefault(model_id, set()).add(entry.row.host)
    named = []
    for entry in entries:
        for model_id in entry.ids:
            shared = len(hosts_of[model_id]) > 1
            name = f"{model_id}@{entry.row.host}" if shared else model_id
            named.append((name, entry, model_id))
    counts: dict[str, int] = {}
    for name, _, _ in named:
        counts[name] = counts.get(name, 0) + 1
    live: list[dict[str, Any]] = []
    commented: list[dict[str, Any]] = []
    for name, entry, model_id in named:
        row = entry.row
        if counts[name] > 1:
            notes.append(
                LeftOut(
                    row.host, "its LiteLLM model_name would also name another deployment", model_id
                )
            )
            continue
        deployment = {
            "model_name": name,
            "litellm_params": {
                "model": f"openai/{model_id}",
                "api_base": row.local_base_url,
                "api_key": f"os.environ/{row.api_key_env}" if row.api_key_env else NO_KEY,
            },
            "model_info": _litellm_info(row, model_id),
        }
        (live if entry.live else commented).append(deployment)
    shared_ids = sorted(i for i, hosts in hosts_of.items() if len(hosts) > 1)
    for model_id in shared_ids:
        hosts = ", ".join(sorted(hosts_of[model_id]))
        notes.append(
            LeftOut(
                hosts,
                f"one id listed by {len(hosts_of[model_id])} providers: each deployment is "
                "named <id>@<host>, not balanced over both (a pool balances one model)",
                model_id,
                renamed=True,
            )
        )
    # model_list last: --all's commented deployments continue it (``_with_commented``)
    config = {
        "general_settings": {"master_key": f"os.environ/{LITELLM_MASTER_KEY}"},
        "model_list": live,
    }
    return config, commented


#: LiteLLM's ``model_info.mode`` of a kind other than chat (its default): what its health
#: check and router call the deployment with (https://docs.litellm.ai/docs/proxy/health:
#: ``mode: embedding``, ``mode: completion``).
LITELLM_MODES = {"embeddings": "embedding", "completions": "completion"}


def _litellm_info(row: ModelRow, model_id: str) -> dict[str, str]:
    info = {"id": f"skupper-{_slug(row.host)}-{model_id}"}
    if row.kind in LITELLM_MODES:
        info["mode"] = LITELLM_MODES[row.kind]
    return info


def render_litellm(entries: list[Entry], ctx: ExportContext, left_out: list[LeftOut]) -> str:
    """``litellm_config`` as YAML, for ``litellm --config FILE``: the rows that are not
    serving (``--all``) as commented deployments after the live ones."""
    config, commented = litellm_config(entries, left_out)
    header = [
        "# skupper-mcp models --export litellm: a LiteLLM proxy config.yaml",
        f"# The proxy reads its master key from ${LITELLM_MASTER_KEY} (it refuses to start",
        "# without one): export LITELLM_MASTER_KEY=sk-<a secret of your own> before",
        "# `litellm --config FILE`; clients send it as their API key.",
        *_key_notes(entries, "the proxy reads"),
        *_header_notes(left_out),
    ]
    return "\n".join(header) + "\n" + _with_commented(config, "model_list", commented)


# -- opencode --------------------------------------------------------------------------------


def opencode_config(entries: list[Entry]) -> dict[str, Any]:
    """An ``opencode.json`` with one custom provider per provider host: ``npm``
    ``@ai-sdk/openai-compatible``, ``options.baseURL`` the local URL, ``options.apiKey``
    ``{env:NAME}`` (opencode's variable substitution) when a key is needed, and ``models``
    keyed by the ids ``/v1/models`` reports. Document: opencode's "Custom provider"
    (anomalyco/opencode packages/web/src/content/docs/providers.mdx, https://opencode.ai/docs/providers/#custom-provider;
    ``{env:...}``: https://opencode.ai/docs/config/#env-vars); schema
    https://opencode.ai/config.json. It type-checks as opencode's ``Config``
    (``@opencode-ai/sdk`` 1.19.6 ``dist/v2/gen/types.gen.d.ts``, generated from that
    schema; checked with ``tsc --strict``, by hand: the suite runs no Node). JSON has no
    comments: what was left out is said on stderr only."""
    providers: dict[str, Any] = {}
    for entry in entries:
        row = entry.row
        options: dict[str, str] = {"baseURL": row.local_base_url}
        if row.api_key_env:
            options["apiKey"] = f"{{env:{row.api_key_env}}}"
        providers[f"skupper-{_slug(row.host)}"] = {
            "npm": "@ai-sdk/openai-compatible",
            "name": f"{row.host} (Skupper)",
            "options": options,
            "models": {model_id: {"name": model_id} for model_id in entry.ids},
        }
    return {"$schema": "https://opencode.ai/config.json", "provider": providers}


def render_opencode(entries: list[Entry], ctx: ExportContext, left_out: list[LeftOut]) -> str:
    """``opencode_config`` as JSON, to merge into ``opencode.json``."""
    return json.dumps(opencode_config(entries), indent=2) + "\n"


# -- Continue --------------------------------------------------------------------------------


#: Continue's ``roles`` of a kind other than chat (its default roles are chat, edit, apply,
#: summarize): https://docs.continue.dev/customize/model-roles/00-intro (``embed``: vector
#: search for @Codebase and @Docs; ``autocomplete``: completions in the editor).
CONTINUE_ROLES = {"embeddings": ("embed",), "completions": ("autocomplete",)}


def continue_models(entries: list[Entry]) -> list[tuple[bool, dict[str, Any]]]:
    """Continue ``config.yaml`` (schema v1) ``models`` entries, each with whether it is
    live: ``provider: openai``, ``model`` the id, ``apiBase`` the local URL and ``apiKey``
    ``${{ secrets.NAME }}``. Documents: https://docs.continue.dev/reference (config.yaml:
    name, version, schema, models) and https://docs.continue.dev/customize/model-providers/top-level/openai
    ("OpenAI API compatible providers": apiBase). Continue resolves ``secrets.NAME`` from
    ``~/.continue/.env`` or the workspace's ``.continue/.env`` (not from the process
    environment, continuedev/continue#5902): put ``NAME=<key>`` there. It passes
    Continue's own ``configYamlSchema`` (``@continuedev/config-yaml`` 1.42.0; checked by
    hand: the suite runs no Node)."""
    models = []
    for entry in entries:
        row = entry.row
        for model_id in entry.ids:
            model: dict[str, Any] = {
                "name": f"{model_id} ({row.host})",
                "provider": "openai",
                "model": model_id,
                "apiBase": row.local_base_url,
            }
            if row.api_key_env:
                model["apiKey"] = f"${{{{ secrets.{row.api_key_env} }}}}"
            if row.kind in CONTINUE_ROLES:
                model["roles"] = list(CONTINUE_ROLES[row.kind])
            models.append((entry.live, model))
    return models


def continue_config(entries: list[Entry]) -> dict[str, Any]:
    """The live part of the Continue ``config.yaml`` (``continue_models``)."""
    live = [m for is_live, m in continue_models(entries) if is_live]
    return {"name": "skupper-mcp models", "version": "0.0.1", "schema": "v1", "models": live}


def render_continue(entries: list[Entry], ctx: ExportContext, left_out: list[LeftOut]) -> str:
    """``continue_config`` as YAML, for ``~/.continue/config.yaml``; the rows that are not
    serving (``--all``) as commented entries after it."""
    header = [
        "# skupper-mcp models --export continue: a Continue config.yaml",
        *_key_notes(entries, "Continue reads each secret from ~/.continue/.env:"),
        *_header_notes(left_out),
    ]
    commented = [m for is_live, m in continue_models(entries) if not is_live]
    return "\n".join(header) + "\n" + _with_commented(continue_config(entries), "models", commented)


# -- Goose -----------------------------------------------------------------------------------


def goose_providers(entries: list[Entry], ctx: ExportContext) -> dict[str, dict[str, Any]]:
    """Goose declarative custom providers, one per provider host, by file name (each a file
    of its own in ``~/.config/goose/custom_providers/``, which Goose reads one
    ``DeclarativeProviderConfig`` per ``*.json``): ``name``, ``engine`` ``openai``,
    ``display_name``, ``description``, ``api_key_env`` the variable that holds the key
    (Goose's ``Config::get_secret`` reads the environment first,
    crates/goose/src/config/base.rs), ``base_url`` the local chat completions URL,
    ``models`` (``ModelInfo``: ``name`` and ``context_limit``, from the profile's
    ``-<N>k``, else Goose's own default), ``supports_streaming``, and ``requires_auth``
    whether a key is needed (newer Goose reads it; serde skips it in older ones).
    Document: block/goose crates/goose/src/config/declarative_providers.rs@c26081a44c4a
    (``DeclarativeProviderConfig``, ``load_custom_providers``), ModelInfo in
    crates/goose/src/providers/base.rs, a shipped example
    crates/goose/src/providers/declarative/llama_swap.json, and
    https://block.github.io/goose/docs/getting-started/providers#configure-custom-provider."""
    files: dict[str, dict[str, Any]] = {}
    for entry in entries:
        row = entry.row
        name = f"skupper_{_slug(row.host).replace('-', '_')}"
        files[f"{name}.json"] = {
            "name": name,
            "engine": "openai",
            "display_name": f"{row.host} (Skupper)",
            "description": f"Models of {row.host} through the Skupper network",
            "api_key_env": row.api_key_env or "",
            "base_url": f"{row.local_base_url}/chat/completions",
            "models": [
                {"name": model_id, "context_limit": context_limit(row, model_id, ctx)}
                for model_id in entry.ids
            ],
            "requires_auth": row.api_key_env is not None,
            "supports_streaming": True,
        }
    return files


def context_limit(row: ModelRow, model_id: str, ctx: ExportContext) -> int:
    """The context a model serves, from the name of the profile that serves it
    (``g3b-4k``: 4096); Goose's own default when the name does not say."""
    profiles = ctx.profiles.get(row.host, {})
    names = [p for p, served in profiles.items() if served == model_id] + [row.profile]
    for name in names:
        found = _CONTEXT_SUFFIX.search(name)
        if found:
            return int(found.group(1)) * 1024
    return GOOSE_CONTEXT_LIMIT


def render_goose(
    entries: list[Entry], ctx: ExportContext, left_out: list[LeftOut]
) -> dict[str, str]:
    """``goose_providers``: each file's JSON by its name."""
    return {
        name: json.dumps(content, indent=2) + "\n"
        for name, content in goose_providers(entries, ctx).items()
    }


# -- shared ----------------------------------------------------------------------------------


def _only_our_placeholders(fmt: str, text: str, entries: list[Entry]) -> None:
    """The last line: a rendered file holds no placeholder of its tool but our own key
    references (an id that passed ``placeholder`` cannot add one, but a change elsewhere
    might)."""
    keys = {e.row.api_key_env for e in entries if e.row.api_key_env}
    # our own comments (headers, --all's commented entries) say what a placeholder is;
    # whatever they quote of an id went through ``placeholder`` too
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    if fmt == "opencode":
        found = set(re.findall(r"\{\s*(?:env|file)\s*:[^}]*\}?", text, re.IGNORECASE))
        extra = found - {f"{{env:{k}}}" for k in keys}
    elif fmt == "continue":
        found = set(re.findall(r"\$\s*\{\s*\{[^}]*\}?\}?", text))
        extra = found - {f"${{{{ secrets.{k} }}}}" for k in keys}
    elif fmt == "litellm":
        found = set(re.findall(r"os\.environ/[^\s'\"]*", text, re.IGNORECASE))
        extra = found - {f"os.environ/{k}" for k in [*keys, LITELLM_MASTER_KEY]}
    else:
        return
    if extra:
        raise ValueError(f"the {fmt} export would hold a placeholder that is not ours")


def _header_notes(left_out: list[LeftOut]) -> list[str]:
    """A header's lines about what was left out or renamed (never an id's text)."""
    if not left_out:
        return []
    return ["# not as listed:", *(f"#   {_comment(n.in_header())}" for n in left_out)]


def _key_notes(entries: list[Entry], how: str) -> list[str]:
    keys = sorted({e.row.api_key_env for e in entries if e.row.api_key_env})
    if not keys:
        return []
    return [f"# model API keys: {how} {', '.join(keys)} (each <VAR>_FILE's key in the topology)"]


def _with_commented(config: dict[str, Any], key: str, commented: list[dict[str, Any]]) -> str:
    """``config`` as YAML whose last key, the list ``key``, is followed by ``commented``
    (--all's rows that do not serve) as commented items of that list, so that uncommenting
    one adds it to the list. An empty list is written ``[]`` (the tools refuse a null), and
    the commented items then bring the key with them, to replace that line."""
    assert list(config)[-1] == key, f"{key} must be the config's last key"
    text = _yaml(config)
    if not commented:
        return text
    items = _yaml({key: commented}).splitlines()
    if config[key]:
        note = "# not serving now (--all): uncomment an entry when it serves\n"
        items = items[1:]
    else:
        note = f"# not serving now (--all): when one serves, replace `{key}: []` with these lines\n"
    return text + note + "".join(f"# {line}\n" for line in items)


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


def _one(
    render: Callable[[list[Entry], ExportContext, list[LeftOut]], str],
) -> Callable[[list[Entry], ExportContext, list[LeftOut]], dict[str, str]]:
    return lambda entries, ctx, left_out: {"": render(entries, ctx, left_out)}


_RENDERERS: dict[str, Callable[[list[Entry], ExportContext, list[LeftOut]], dict[str, str]]] = {
    "env": _one(render_env),
    "litellm": _one(render_litellm),
    "opencode": _one(render_opencode),
    "continue": _one(render_continue),
    "goose": render_goose,
}


def _slug(label: str) -> str:
    """A row's name (``HOST`` or ``HOST/ENDPOINT``) as a name part: a provider id that
    opencode splits at ``/``, a Goose file name."""
    return label.replace("/", "-")
