"""Tables as Go's text/tabwriter prints them with tab padding (what the real CLI uses)."""

from __future__ import annotations

from collections.abc import Sequence

_TAB_WIDTH = 8


def _tabs(text_width: int, cell_width: int) -> str:
    return "\t" * (-(-(cell_width - text_width) // _TAB_WIDTH))


def tab_table(
    rows: Sequence[Sequence[str]],
    min_width: int = 8,
    padding: int = 1,
    align_right: bool = False,
) -> str:
    """Cells padded with tabs to a column width rounded up to the tab width.

    The last cell of a row is not a column: it is written as is. With ``align_right`` the
    padding goes before each column's text, so the last cell follows the one before it
    directly, exactly as tabwriter.AlignRight prints (``skupper link status`` does this).
    """
    columns = max((len(r) for r in rows), default=0) - 1
    widths = []
    for col in range(columns):
        widest = max((len(r[col]) for r in rows if len(r) > col + 1), default=0)
        width = max(min_width, widest + padding)
        widths.append(-(-width // _TAB_WIDTH) * _TAB_WIDTH)
    lines = []
    for row in rows:
        out = []
        for col, cell in enumerate(row):
            pad = _tabs(len(cell), widths[col]) if col < len(row) - 1 else ""
            out.append(pad + cell if align_right else cell + pad)
        lines.append("".join(out))
    return "\n".join(lines) + "\n"
