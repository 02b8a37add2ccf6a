"""``aifabric catalog`` — list the hardware catalog (with sources) as a table."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from aifabric.cli._json import dumps
from aifabric.errors import InputError

KINDS = ("switch", "nic", "optic", "cable", "gpu")
VIEWS = (*KINDS, "tco")


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
            None, "--kind", help="switch | nic | optic | cable | gpu | tco (default: all)."
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

            if kind is not None and kind not in VIEWS:
                raise InputError("unknown kind", field="--kind", value=kind, allowed=", ".join(VIEWS))
            cat = load_catalog(catalog_file)
            kinds = (kind,) if kind and kind != "tco" else (() if kind == "tco" else KINDS)
            show_tco = kind in (None, "tco")
            if as_json:
                out = {}
                for k in kinds:
                    df = catalog_frame(cat, k)
                    out[k] = json.loads(df.to_json(orient="records"))
                if show_tco:
                    out["tco"] = {key: item.model_dump() for key, item in cat.tco.items()}
                    out["price_summary"] = cat.price_summary()
                typer.echo(dumps(out, indent=2))
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
            if show_tco:
                t = Table(
                    title=f"TCO parameters ({len(cat.tco)}) — override in a --catalog file's tco: section"
                )
                t.add_column("parameter", no_wrap=True)
                t.add_column("value, range, provenance", overflow="fold")
                for key, item in cat.tco.items():
                    t.add_row(key, item.describe())
                con.print(t)
                ps = cat.price_summary()
                con.print(
                    f"prices: {ps['sourced']} sourced, {ps['estimate']} estimates, {ps['input']} input ranges "
                    "(no public price; replace with quotes via --catalog)"
                )
            return 0

        run_guarded(body)
