"""Tables for the terminal: a Markdown pipe table (what the library's ``format_*`` functions write
for documents) drawn as a rich table that wraps its cells to the terminal's width."""

from __future__ import annotations

SHORT = 10  # a column keeps its longest word whole up to this width


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def pipe_table(markdown: str, title: str | None = None, notes: tuple[str, ...] = ("source",)):
    """A rich Table from a Markdown pipe table (header, separator, rows); cells wrap, never truncate.
    Columns named in ``notes`` (long provenance text) leave the table and become its caption, one line
    per row (``case: source``), so the numbers keep their width at 80 columns."""
    from rich import box
    from rich.table import Table

    lines = [ln for ln in markdown.splitlines() if ln.strip().startswith("|")]
    t = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_lines=False)
    if not lines:
        return t
    body = [_cells(ln) for ln in lines[1:] if not set(ln.replace("|", "").strip()) <= set("-: ")]
    head = _cells(lines[0])
    moved = [i for i, name in enumerate(head) if name in notes]
    if moved:
        t.caption = "\n".join(f"{r[0]}: " + "; ".join(r[i] for i in moved if i < len(r)) for r in body)
        t.caption_justify = "left"
        keep = [i for i in range(len(head)) if i not in moved]
        head, body = [head[i] for i in keep], [[r[i] for i in keep if i < len(r)] for r in body]
    for i, name in enumerate(head):
        word = max((len(w) for r in body if i < len(r) for w in r[i].split()), default=0)
        # a column is never narrower than its longest word (up to SHORT): numbers stay whole
        t.add_column(
            name, overflow="fold", min_width=min(max(word, len(name.split()[0]) if name else 0), SHORT)
        )
    for cells in body:
        t.add_row(*cells)
    return t


def rows_table(rows: list[tuple], columns: tuple[str, ...], title: str | None = None):
    """A rich Table of plain rows (strings), wrapping."""
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for c in columns:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*r)
    return t
