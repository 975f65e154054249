"""What `tcplab reproduce` prints: the packs, the paper's numbers beside tcplab's, and the
verdict on each conclusion."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table

from tcplab.papers.pack import Pack, Reproduction


def packs_table(packs: Iterable[Pack]) -> Table:
    """One row per paper pack: its name (the argument of `tcplab reproduce`) and paper."""
    table = Table(title="paper packs")
    for heading in ("pack", "paper", "experiments", "numbers", "conclusions"):
        table.add_column(heading, justify="left" if heading in ("pack", "paper") else "right")
    for pack in packs:
        table.add_row(
            pack.name,
            pack.title,
            str(len(pack.experiments)),
            str(len(pack.published)),
            str(len(pack.checks)),
        )
    return table


def comparisons_table(reproduction: Reproduction) -> Table:
    """The paper's published numbers beside tcplab's, with their ratio."""
    table = Table(title=f"{reproduction.pack.name}: published numbers (ratio = tcplab / paper)")
    for heading in ("what", "source", "paper", "tcplab", "ratio"):
        table.add_column(heading, justify="left" if heading in ("what", "source") else "right")
    for comparison in reproduction.comparisons:
        ratio = "—" if comparison.ratio is None else f"{comparison.ratio:.3f}"
        if comparison.fitted:
            ratio += " (fitted)"
        table.add_row(
            comparison.what,
            comparison.source,
            comparison.paper_text,
            comparison.tcplab_text,
            ratio,
        )
    return table


def verdicts_table(reproduction: Reproduction) -> Table:
    """Each conclusion of the paper, whether it held here, and the numbers that say so."""
    table = Table(title=f"{reproduction.pack.name}: the paper's conclusions")
    for heading in ("verdict", "conclusion", "evidence"):
        table.add_column(heading)
    for check, verdict in reproduction.verdicts:
        table.add_row(verdict.status.upper(), f"{check.claim} ({check.source})", verdict.evidence)
    return table
