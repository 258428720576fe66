"""The lifecycle suite, in parts that each run on a world of their own."""

from pathlib import Path

#: The number of each part's first file (test_NN_...): making the network and taking it up
#: and down (before setup to up/down), its partial and cluster cases (partial hosts to CRC),
#: reading it (status to logs), then its front ends and its end (front ends to faults).
#: Parts run on workers of their own at once: the longest (up/down's waits on skrouterd's
#: remoteLsMaxAgeSeconds) sets the half's time, so none is much longer. The scenario matrix
#: (97) runs on a world of its own, from fresh to torn down; so does the noisy world (98),
#: whose hosts carry real hosts' quirks, and the hardest world (99, one host with every quirk,
#: beside its quiet twin): a part of its own, so a worker runs it while another runs 98's.
PARTS = (5, 30, 60, 70, 97, 98, 99)


def part_of(path: str | Path) -> int:
    """The part a lifecycle file belongs to, by the number in its name."""
    number = int(Path(path).name.split("_")[1])
    return max(first for first in PARTS if first <= number)
