"""Which skupper-router release the imitation behaves as, and what that changes.

A router container's release is its image's tag (``quay.io/skupper/skupper-router:3.5.1``),
which the emulated skupper CLI picks by its own release (skupper's Makefile
``ROUTER_IMAGE_TAG``: 2.1.0-2.1.1 -> 3.4.0, 2.1.2 -> 3.4.1, 2.1.3-2.1.4 -> 3.4.2,
2.2.0 -> 3.5.0, 2.2.1 -> 3.5.1); the image hands it to the imitation in ``RELEASE_VAR``.

3.5.0 added the router entity's ``unreachableHoldoffSeconds`` (default 1;
python/skupper_router/management/skrouter.json@3.5.0 and @3.5.1, absent @3.4.2): once a
router is unreachable, its addresses are invalidated after that many one-second ticks
(python/skupper_router_internal/router/node.py@3.5.1:186-202). Before it, a lost router's
addresses stay until its link state ages out: ``remoteLsMaxAgeSeconds`` (default 60,
skrouter.json@3.4.2) after the last router advertisement heard from it (``last_seen``,
node.py@3.4.2:288; one every ``raIntervalSeconds``, 30, in a stable network), then about
three one-second ticks of sweep before the node goes (node.py@3.4.2:88,111-113): 30-63 s
after the loss, by where the loss falls between two advertisements (``link_state_hold``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

#: The router image tag each Skupper release deploys (skupper's Makefile ROUTER_IMAGE_TAG).
ROUTER_VERSIONS = {
    "2.0.0": "3.2.0",
    "2.0.1": "3.3.1",
    "2.1.0": "3.4.0",
    "2.1.1": "3.4.0",
    "2.1.2": "3.4.1",
    "2.1.3": "3.4.2",
    "2.1.4": "3.4.2",
    "2.2.0": "3.5.0",
    "2.2.1": "3.5.1",
}
RELEASE_VAR = "SKMCP_SANDBOX_ROUTER_RELEASE"
DEFAULT_RELEASE = "3.4.2"  # a router started outside a container (the tests' own)
HOLDOFF_SINCE = (3, 5)
DEFAULT_UNREACHABLE_HOLDOFF = 1.0
#: ``raIntervalSeconds``'s default (skrouter.json@3.4.2; Skupper sets none), and the sweep:
#: a node without link state goes on its third tick after (``keep_alive_count > 2``).
RA_INTERVAL = 30.0
SWEEP = 3.0


def link_state_hold(
    max_age: float,
    linked_for: float,
    ra_interval: float = RA_INTERVAL,
    rng: random.Random | None = None,
) -> float:
    """Seconds from a lost link until a 3.4.x router forgets the router behind it: its link
    state is ``max_age`` old that long after the last advertisement heard, which came some
    time in the last ``ra_interval`` (at the latest when the link came up, ``linked_for``
    seconds before the loss: a router advertises to a new neighbour at once), then the
    sweep. Drawn: where the loss fell between two advertisements is not known."""
    draw = rng or random
    since_advertised = min(draw.uniform(0.0, ra_interval), max(0.0, linked_for))
    return max(0.0, max_age - since_advertised) + draw.uniform(0.0, SWEEP)


def router_version(skupper_version: str) -> str:
    """The router image tag a Skupper release deploys (the newest known for unknown ones)."""
    return ROUTER_VERSIONS.get(skupper_version, "3.5.1")


def parse_release(tag: str) -> tuple[int, int] | None:
    """``3.5.1`` -> (3, 5); None for a tag that is no release (``main``, ``latest``)."""
    match = re.match(r"(\d+)\.(\d+)", tag)
    return (int(match.group(1)), int(match.group(2))) if match else None


def has_unreachable_holdoff(tag: str) -> bool:
    release = parse_release(tag)
    return release is not None and release >= HOLDOFF_SINCE


def unreachable_holdoff(tag: str, configured: float | None) -> float | None:
    """Seconds after which a lost router's addresses go (None: only when its link state
    ages out): the configured value on a release that has the attribute, else its default."""
    if not has_unreachable_holdoff(tag):
        return None
    return DEFAULT_UNREACHABLE_HOLDOFF if configured is None else configured


def release_tag(env: Mapping[str, str]) -> str:
    """The release a router process was started as (its image's tag)."""
    return env.get(RELEASE_VAR) or DEFAULT_RELEASE
