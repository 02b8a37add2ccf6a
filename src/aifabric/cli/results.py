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
                _print(df, csv)
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


def _print(df, csv: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    hidden = {"inputs_json", "options_json", "attempt", "attempts", "worker", "finished_at", "point_id"}
    hidden |= {"point_index", "row_index", "wall_s"}
    hidden |= {c for c in df.columns if df[c].isna().all()}  # e.g. no failed point: no error column
    cols = [c for c in df.columns if c not in hidden][:12]
    t = Table(show_lines=False)
    for c in cols:
        t.add_column(c, overflow="fold")
    for r in df[cols].head(200).itertuples(index=False):
        t.add_row(*[_cell(v) for v in r])
    console.print(t)
    note = f"{len(df)} rows"
    if len(df) > 200 or len(cols) < len([c for c in df.columns if c not in hidden]):
        note += " (first 200 rows / 12 columns shown; --json, --csv or --columns for all)"
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
