"""What a kubeconfig will run on this machine: the ``exec`` plugin or ``auth-provider``
command of the user its context names, and whether it may.

The Kubernetes client runs that command when it loads the kubeconfig, before any request,
so whoever wrote the file chooses a command run as the user. It may run only from a file
the user named: CRC_KUBECONFIG of their topology (which is itself named, or their own,
``topology.discovery``), an entry of ``$KUBECONFIG`` given as an absolute path, or
``~/.kube/config``. A relative ``$KUBECONFIG`` entry names a file in whatever folder the
command runs from, so the folder, not the user, would choose the command: refused
(``refusal``). The precheck names the command either way.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

KubeconfigDocument = tuple[Path, dict[str, Any]]
#: How much of a plugin's command line a message quotes.
COMMAND_CHARS = 200


@dataclass(frozen=True)
class CredentialPlugin:
    """The command a kubeconfig's user runs for its credentials."""

    path: Path  # the file that defines the user
    user: str
    kind: str  # "exec plugin" or "auth-provider"
    command: str  # as a shell would show it, cut to COMMAND_CHARS

    def describe(self) -> str:
        return f"{self.path} runs `{self.command}` (the {self.kind} of user {self.user!r})"


def current_context(documents: list[KubeconfigDocument], context: str | None) -> str | None:
    """``context``, else the first file's ``current-context`` (as the client merges them)."""
    return context or next(
        (str(d["current-context"]) for _, d in documents if d.get("current-context")), None
    )


def named(
    documents: list[KubeconfigDocument], section: str, name: object
) -> tuple[Path, dict[str, Any]] | None:
    """The first entry called ``name`` in ``section`` (contexts, clusters, users)."""
    if not name:
        return None
    for path, document in documents:
        entries = document.get(section)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("name") == name:
                return path, entry
    return None


def credential_plugin(
    documents: list[KubeconfigDocument], context: str | None
) -> CredentialPlugin | None:
    """The command the user of ``context`` (else the current context) runs, if any."""
    found = named(documents, "contexts", current_context(documents, context))
    settings = (found[1].get("context") if found else None) or {}
    user_name = settings.get("user") if isinstance(settings, dict) else None
    user = named(documents, "users", user_name)
    if user is None:
        return None
    path, entry = user
    auth = entry.get("user") or {}
    if not isinstance(auth, dict):
        return None
    if isinstance(auth.get("exec"), dict):
        exec_ = auth["exec"]
        words = [str(exec_.get("command") or "")] + [str(a) for a in exec_.get("args") or []]
        return CredentialPlugin(path, str(user_name), "exec plugin", _shown(words))
    if isinstance(auth.get("auth-provider"), dict):
        provider = auth["auth-provider"]
        config = provider.get("config") if isinstance(provider.get("config"), dict) else {}
        name = str(provider.get("name") or "unnamed")
        if config.get("cmd-path"):
            words = [str(config["cmd-path"]), *str(config.get("cmd-args") or "").split()]
            command = _shown(words)
        else:
            command = f"the {name} auth-provider's token refresh"
        return CredentialPlugin(path, str(user_name), f"{name} auth-provider", command)
    return None


def _shown(words: list[str]) -> str:
    text = shlex.join(words)
    if len(text) > COMMAND_CHARS:
        text = f"{text[:COMMAND_CHARS]}... ({len(text) - COMMAND_CHARS} more characters)"
    return text


@dataclass(frozen=True)
class KubeconfigFile:
    path: Path
    may_run_plugins: bool
    named_by: str  # where the path came from, for messages


def kubeconfig_files(
    kubeconfig: Path | None, environ: Mapping[str, str] | None = None
) -> list[KubeconfigFile]:
    """The files the client reads for a site, as it chooses them: the site's own file,
    else each entry of ``$KUBECONFIG``, else ``~/.kube/config``."""
    env = os.environ if environ is None else environ
    if kubeconfig is not None:
        return [KubeconfigFile(kubeconfig, True, "CRC_KUBECONFIG")]
    if env.get("KUBECONFIG"):
        files = []
        for entry in env["KUBECONFIG"].split(os.pathsep):
            if entry:
                path = Path(entry).expanduser()
                files.append(KubeconfigFile(path, path.is_absolute(), "$KUBECONFIG"))
        return files
    return [KubeconfigFile(Path.home() / ".kube" / "config", True, "the default")]


def read_documents(files: list[KubeconfigFile]) -> list[KubeconfigDocument]:
    """The files parsed; one that cannot be read or parsed is left out (the client's own
    load reports it)."""
    documents = []
    for file in files:
        try:
            loaded = yaml.safe_load(file.path.read_text())
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if isinstance(loaded, dict):
            documents.append((file.path, loaded))
    return documents


def refusal(files: list[KubeconfigFile], plugin: CredentialPlugin | None) -> str | None:
    """Why ``plugin`` may not run from these files, or None when it may (or there is none)."""
    if plugin is None:
        return None
    source = next((f for f in files if f.path == plugin.path), None)
    if source is None or source.may_run_plugins:
        return None
    return (
        f"{plugin.describe()}, but {source.named_by} names it by a relative path, so the "
        "folder skupper-mcp runs from chooses that command: it was not run. Name the "
        "kubeconfig by its absolute path (CRC_KUBECONFIG in topology.env, or $KUBECONFIG)"
    )


def plugin_for(
    kubeconfig: Path | None, context: str | None, environ: Mapping[str, str] | None = None
) -> tuple[CredentialPlugin | None, str | None]:
    """The command a site's kubeconfig runs for its credentials, and why it may not run
    (None: it may). Reads the files."""
    files = kubeconfig_files(kubeconfig, environ)
    plugin = credential_plugin(read_documents(files), context)
    return plugin, refusal(files, plugin)
