"""``aifabric results DIR [--json] [--sql QUERY] [--where KEY=VALUE ...] [--csv FILE]`` — query a
study's results database (DuckDB over the study's Parquet files)."""

from __future__ import annotations

from pathlib import Path

import typer

from aifabric.cli._json import dumps


def register(app: typer.Typer) -> None:
    @app.command("results")
    def results_cmd(
        folder: Path = typer.Argument(..., help="Study folder written by aifabric sweep --out."),
        as_json: bool = typer.Option(False, "--json", help='Print {"rows": [...]} on stdout.'),
        sql: str | None = typer.Option(
            None, "--sql", help="A DuckDB query over the views points, fabrics / sizes (and <table>_raw)."
        ),
        where: list[str] = typer.Option(
            [],
            "--where",
            help="Filter KEY OP VALUE (OP: = != < <= > >=); KEY a column or dotted input key; repeatable.",
        ),
        table: str = typer.Option("points", "--table", help="points (one row per point) | fabrics | sizes."),
        columns: str | None = typer.Option(None, "--columns", help="Comma-separated columns to show."),
        ci: str | None = typer.Option(
            None,
            "--ci",
            help="Mean and 95% confidence interval of these comma-separated metrics over the seed axis.",
        ),
        csv: Path | None = typer.Option(None, "--csv", help="Also write the rows to this CSV file."),
        limit: int | None = typer.Option(None, "--limit", help="At most this many rows."),
    ) -> None:
        """Query a study's results: SQL or filters; JSON, a table, or CSV."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.cli._outpaths import check_out_file, write_guarded
            from aifabric.sweep.query import query

            check_out_file(csv, "--csv")
            df = query(folder, sql=sql, where=where, table=table, columns=columns, ci=ci, limit=limit)
            if csv is not None:
                from aifabric.sweep.query import write_csv

                write_guarded(lambda: write_csv(df, csv), "--csv", csv)
            if as_json:
                typer.echo(dumps({"rows": _records(df)}, indent=2, default=str))
            else:
                _print(df, csv, asked=bool(columns or sql))
            return 0

        run_guarded(body)


def _records(df) -> list[dict]:
    import math

    rows = []
    for r in df.to_dict("records"):
        clean = {}
        for k, v in r.items():
            if hasattr(v, "isoformat"):
                v = v.isoformat()
            elif hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            clean[k] = v
        rows.append(clean)
    return rows


HIDDEN = {"inputs_json", "options_json", "attempt", "attempts", "worker", "finished_at", "point_id"}
HIDDEN |= {"point_index", "row_index", "wall_s"}
MAX_ROWS = 200


def default_columns(df, width: int) -> list[str]:
    """The columns shown without ``--columns``: the study's inputs and status first, then the results
    in their order, as many as fit ``width`` terminal columns whole (none is cut or wrapped)."""
    shown = [c for c in df.columns if c not in HIDDEN and not df[c].isna().all()]
    used, out = 0, []
    for c in shown:
        cells = [_cell(v) for v in df[c].head(MAX_ROWS)]
        need = max([len(c), *map(len, cells)]) + 3  # rich's padding and rule
        if out and used + need > width:
            break  # in order: a later, narrower column would read as more important
        out.append(c)
        used += need
    return out


def _print(df, csv: Path | None, asked: bool = False) -> None:
    """The rows as a table: the columns asked for (``--columns``, ``--sql``), else those that fit."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    every = [c for c in df.columns if c not in HIDDEN and not df[c].isna().all()]
    cols = every if asked else default_columns(df, console.width - 1)
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for c in cols:
        t.add_column(c, no_wrap=True)
    for r in df[cols].head(MAX_ROWS).itertuples(index=False):
        t.add_row(*[_cell(v) for v in r])
    console.print(t)
    note = f"{len(df)} rows"
    if len(df) > MAX_ROWS:
        note += f" (first {MAX_ROWS} shown)"
    if len(cols) < len(every):
        rest = [c for c in every if c not in cols]
        note += f"; {len(cols)} of {len(every)} columns shown, the others with --columns: {', '.join(rest)}"
    if csv is not None:
        note += f"; written to {csv}"
    console.print(note)


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if v != v:
            return ""
        return f"{v:,.4g}" if abs(v) < 1e3 else f"{v:,.0f}"
    return str(v)
