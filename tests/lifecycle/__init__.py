"""The lifecycle suite, in two parts that each run on a world of their own."""

from pathlib import Path

#: The number of each part's first file (test_NN_...): making and changing the network
#: (before setup to CRC), then reading and ending it (status to teardown and faults).
PARTS = (5, 60)


def part_of(path: str | Path) -> int:
    """The part a lifecycle file belongs to, by the number in its name."""
    number = int(Path(path).name.split("_")[1])
    return max(first for first in PARTS if first <= number)
