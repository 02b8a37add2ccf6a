"""``aifabric catalog`` — list the hardware catalog (with sources) as a table."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from aifabric.errors import InputError

KINDS = ("switch", "nic", "optic", "cable", "gpu")


def _cell(value: object) -> str:
    """A table cell: empty for None / NaN / pandas NA (``NA != NA`` is NA, whose truth value raises
    — issue 16), ``:g`` for floats."""
    import pandas as pd

    try:
        if value is None or bool(pd.isna(value)):
            return ""
    except (TypeError, ValueError):
        pass
    return f"{value:g}" if isinstance(value, float) else str(value)


def register(app: typer.Typer) -> None:
    @app.command("catalog")
    def catalog_cmd(
        kind: str | None = typer.Option(
            None, "--kind", help="switch | nic | optic | cable | gpu (default: all)."
        ),
        catalog_file: Path | None = typer.Option(
            None, "--catalog", help="YAML file overriding catalog records."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """List catalog records: specs, prices, power, and where each number comes from."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.hardware.catalog import catalog_frame, load_catalog

            if kind is not None and kind not in KINDS:
                raise InputError("unknown kind", field="--kind", value=kind, allowed=", ".join(KINDS))
            cat = load_catalog(catalog_file)
            kinds = (kind,) if kind else KINDS
            if as_json:
                out = {}
                for k in kinds:
                    df = catalog_frame(cat, k)
                    out[k] = json.loads(df.to_json(orient="records"))
                typer.echo(json.dumps(out, indent=2))
                return 0
            from rich.console import Console
            from rich.table import Table

            con = Console(width=max(120, Console().width))
            for k in kinds:
                df = catalog_frame(cat, k).drop(columns=["name", "kind"], errors="ignore")
                t = Table(title=f"{k} records ({len(df)}) — names and every basis: aifabric catalog --json")
                for col in df.columns:
                    t.add_column(col, no_wrap=col != "source", overflow="fold")
                for row in df.itertuples(index=False):
                    t.add_row(*[_cell(v) for v in row])
                con.print(t)
            return 0

        run_guarded(body)
