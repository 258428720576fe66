"""What a MultiKeyListener's status says of its destination, whatever the release's words.
Pure.

A MultiKeyListener has a destination when some connector in the network has one of its
routing keys: the controller writes ``hasDestination: true`` (``omitempty``: false is no
field at all) and the Operational condition from it, and the status message is the
condition's (``pkg/apis/skupper/v2alpha1/multikeylistener_types.go@2.2.1:206-228``). The
words differ by release: 2.2.0-2.2.1 set Operational only when ``hasDestination`` changes,
so a listener that never had a destination keeps the initial ``Not Operational``
(``readyState`` of ``types.go``) and one that lost its destination reads ``No matching
connectors``; main after 2.2.1 evaluates Operational on every update, so a new one reads
``No matching connectors`` at once (#2498, commit 62dda196). Both mean no destination; a
reader decides on this, never on the words.
"""

from __future__ import annotations

#: The status messages that say a MultiKeyListener has no destination, in every release.
NO_DESTINATION = ("No matching connectors", "Not Operational")
_NO_DESTINATION = frozenset(m.casefold() for m in NO_DESTINATION)


def has_destination(
    status: str | None,
    message: str | None,
    flag: bool | None,
    reachable_keys: tuple[str, ...] | None,
) -> bool | None:
    """Whether the controller says the MultiKeyListener has a destination: True with
    ``hasDestination`` (``flag``), a reachable key or Ready; False when its message is one
    of the no-destination words of any release (``NO_DESTINATION``) or it reports no key
    reachable; None when it says neither (not looked at yet, an error of its own)."""
    if flag or reachable_keys or status == "Ready":
        return True
    if message is not None and message.strip().casefold() in _NO_DESTINATION:
        return False
    if reachable_keys is not None and status == "Pending":
        return False
    return None
