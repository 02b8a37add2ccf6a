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


def _price(r) -> str:
    lo, hi = _money(r.get("price_low_usd")), _money(r.get("price_high_usd"))
    rng = f"\n{lo}–{hi}" if lo and hi and lo != hi else ""
    when = f", {r['price_date']}" if _cell(r.get("price_date")) else ""
    return f"{_money(r.get('price_usd'))}{rng}\n{_cell(r.get('price_confidence'))}{when}"


def _money(v) -> str:
    return f"{v:,.0f}" if isinstance(v, int | float) and v == v else _cell(v)


def compact(kind: str, df) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """A kind's records as a few wrapped columns that fit 80 columns: the numbers a buyer compares
    (ports and rate, price with its range, confidence and date, power) and the source."""
    recs = df.to_dict("records")
    if kind == "gpu":
        cols = ("id", "BF16 TFLOPS", "NVLink GB/s", "HBM GB", "NICs × Gb/s", "server USD", "source")
        return cols, [
            (
                r["id"],
                _cell(r.get("bf16_tflops")),
                _cell(r.get("nvlink_gbytes_per_s")),
                _cell(r.get("hbm_gbytes")),
                f"{_cell(r.get('nics_per_node'))} × {_cell(r.get('nic_rate_gbps'))}",
                _money(r.get("server_price_usd")),
                _cell(r.get("source")),
            )
            for r in recs
        ]
    cols = ("id", "technology", "ports × Gb/s", "price USD (range)", "power W", "source")
    return cols, [
        (
            r["id"],
            _cell(r.get("technology")),
            f"{_cell(r.get('ports'))} × {_cell(r.get('rate_gbps'))}",
            _price(r) + (f"\n+{_cell(r['price_usd_per_m'])}/m" if r.get("price_usd_per_m") else ""),
            _cell(r.get("power_w")),
            _cell(r.get("source")),
        )
        for r in recs
    ]


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

            con = Console()  # the terminal's width; cells wrap, never cut
            for k in kinds:
                cols, rows = compact(k, catalog_frame(cat, k))
                t = Table(
                    title=f"{k} records ({len(rows)}); every field and basis: --json", title_justify="left"
                )
                for col in cols:
                    t.add_column(col, overflow="fold")
                for r in rows:
                    t.add_row(*r)
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
