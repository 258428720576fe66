"""What a Skupper resource's ``status:`` says, parsed once: whether it is Ready, its
message, a MultiKeyListener's destination and reachable keys. Pure. The one place that
reads Skupper's status words: everything else asks ``ResourceStatus.ready``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .multikey_status import has_destination

#: The status word Skupper writes on a resource that is ready (a Link: connected).
READY = "Ready"
#: The message Skupper writes beside a status with nothing more to say.
OK_MESSAGE = "OK"


@dataclass(frozen=True)
class ResourceStatus:
    """What a Skupper resource's ``status:`` says, read once for every consumer."""

    present: bool
    status: str | None = None
    message: str | None = None
    #: a MultiKeyListener's ``hasDestination`` and ``strategy.*.routingKeysReachable``
    #: (multikeylistener_types.go@2.2.0:45-78): None where the status does not say
    has_destination: bool | None = None
    reachable_keys: tuple[str, ...] | None = None

    @property
    def ready(self) -> bool:
        return self.status == READY

    @property
    def destination(self) -> bool | None:
        """A MultiKeyListener's destination as its controller reports it, the same for
        every release's words (``facts.multikey_status``); None: not said."""
        if not self.present:
            return None
        return has_destination(self.status, self.message, self.has_destination, self.reachable_keys)

    @property
    def text(self) -> str:
        """``Ready``, ``Pending: Not operational``, ``absent``..."""
        if not self.present:
            return "absent"
        text = self.status or "Pending"
        return text if not self.message or self.message == OK_MESSAGE else f"{text}: {self.message}"


def resource_status(obj: Any) -> ResourceStatus:
    """The status of a resource as a host or the API gave it. A ``status:`` that is null,
    a string or a list (a file edited by hand) is a resource without a status yet, never an
    error: the file is the host's text."""
    if not isinstance(obj, dict) or not obj:
        return ResourceStatus(False)
    status = obj.get("status")
    if not isinstance(status, dict):
        return ResourceStatus(True)
    said, message = status.get("status"), status.get("message")
    destination = status.get("hasDestination")
    return ResourceStatus(
        True,
        str(said) if said not in (None, "") else None,
        str(message) if message not in (None, "") else None,
        destination if isinstance(destination, bool) else None,
        _reachable_keys(status.get("strategy")),
    )


def _reachable_keys(strategy: Any) -> tuple[str, ...] | None:
    """``routingKeysReachable`` of a priority strategy (a list, in order) or a weighted one
    (key -> weight: the heaviest first); None when absent or not of that shape."""
    if not isinstance(strategy, dict):
        return None
    priority, weighted = strategy.get("priority"), strategy.get("weighted")
    if isinstance(priority, dict):
        keys = priority.get("routingKeysReachable")
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
            return tuple(keys)
    if isinstance(weighted, dict):
        keys = weighted.get("routingKeysReachable")
        if keys is None:
            return ()  # a weighted status that never had a key reachable (omitempty map)
        if isinstance(keys, dict) and all(
            isinstance(k, str) and isinstance(v, int) for k, v in keys.items()
        ):
            return tuple(sorted(keys, key=lambda k: (-keys[k], k)))
    return None
