"""The words every layer shares, defined once: a site's role and platform, the host names of
the two consumer sites, the client configurations the models catalog exports, and the
callback operations report their progress through."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, get_args

Role = Literal["provider", "consumer"]
"""A provider serves a model from its own site; a consumer only reaches the providers'."""

Platform = Literal["podman", "kubernetes"]

LOCAL_HOST = "local"
"""The host name of the local consumer site (a podman site; the topology's LOCAL_...)."""

KUBE_HOST = "crc"
"""The host name of the optional Kubernetes consumer site (the topology's CRC_...)."""

SITE_UP_PODMAN = "the router runs under its unit, with the system controller"
SITE_UP_CLUSTER = "a router pod is Running"
"""Why a healthy site is ``up`` (``engine/condition.py``): the words its status row's
Controller and Router cells already show, so the status table's State cell leaves them out
(``render.status_tables``; the JSON's ``state_reason`` keeps them)."""

Progress = Callable[[str], Awaitable[None]]
"""Receives one line per step as an operation runs (CLI: stderr; MCP: progress)."""

ModelKind = Literal["chat", "embeddings", "completions"]
"""What a model endpoint serves: chat completions, embeddings (a pooling model: vLLM
``--runner pooling``, llama.cpp ``--embeddings``) or plain text completions."""
MODEL_KINDS: tuple[str, ...] = get_args(ModelKind)
KindFrom = Literal["topology", "model id", "default"]
"""Where a model endpoint's kind was learnt: declared in the topology, read in its model
id, or assumed (chat); test_model asks the server itself and says so in its check."""

ExportFormat = Literal["env", "litellm", "opencode", "continue", "goose"]
"""The client configurations ``models --export`` writes (``exports``: one renderer each)."""
EXPORT_FORMATS: tuple[str, ...] = get_args(ExportFormat)


@dataclass
class CountedProgress:
    """A ``Progress`` that counts: each line is one step done, of ``total`` the steps
    planned so far. A site plans its steps when its reading is in (``SiteRun.perform``
    calls ``expect``), so the total grows as the sites are read, and a step that no plan
    listed (a reading, a check, a wait for the lock) counts as it happens: the count never
    passes the total."""

    send: Callable[[int, int, str], Awaitable[None]]  # (done, total, line)
    done: int = 0
    planned: int = 0

    def expect(self, steps: int) -> None:
        self.planned += steps

    async def __call__(self, line: str) -> None:
        self.done += 1
        self.planned = max(self.planned, self.done)
        await self.send(self.done, self.planned, line)


def plural(count: int, noun: str) -> str:
    """``1 site``, ``2 sites``: a count and its noun as a sentence says them."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
