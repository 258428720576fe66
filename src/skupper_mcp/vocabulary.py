"""The words every layer shares, defined once: a site's role and platform, the host names of
the two consumer sites, the client configurations the models catalog exports, and the
callback operations report their progress through."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, get_args

Role = Literal["provider", "consumer"]
"""A provider serves a model from its own site; a consumer only reaches the providers'."""

Platform = Literal["podman", "kubernetes"]

LOCAL_HOST = "local"
"""The host name of the local consumer site (a podman site; the topology's LOCAL_...)."""

KUBE_HOST = "crc"
"""The host name of the optional Kubernetes consumer site (the topology's CRC_...)."""

Progress = Callable[[str], Awaitable[None]]
"""Receives one line per step as an operation runs (CLI: stderr; MCP: progress)."""

ExportFormat = Literal["env", "litellm", "opencode", "continue", "goose"]
"""The client configurations ``models --export`` writes (``exports``: one renderer each)."""
EXPORT_FORMATS: tuple[str, ...] = get_args(ExportFormat)
