"""``aifabric calibrate MEASUREMENT... --out CAL.yaml [--fit-max-bytes SIZE] [--json] [--report FILE.html]``
— fit the model to a user's nccl-tests / perftest output and write a calibration file."""

from __future__ import annotations

from pathlib import Path

import typer

from aifabric.cli._json import dumps
from aifabric.errors import InputError

TRANSPORT_WORDS = ("ib", "roce", "efa", "socket", "unknown")


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    def calibrate_cmd(
        files: list[Path] = typer.Argument(
            ...,
            help="nccl-tests output (text or -J JSON) and/or perftest output (ib_*_bw, ib_*_lat; text or JSON).",
        ),
        out: Path = typer.Option(..., "--out", help="Calibration file to write (YAML)."),
        fit_max_bytes: str = typer.Option(
            "256MiB",
            "--fit-max-bytes",
            help="Fit on sizes up to this; larger sizes are held out and predicted.",
        ),
        nic_rate: str | None = typer.Option(
            None,
            "--nic-rate",
            help="Line rate of one GPU's NIC(s), e.g. 400Gbps (when the file does not say).",
        ),
        gpus_per_node: int | None = typer.Option(
            None, "--gpus-per-node", help="GPUs per server (when the file's '# Using devices' does not say)."
        ),
        gpu: str | None = typer.Option(
            None, "--gpu", help="h100 | h200 | b200 (when the device line does not say)."
        ),
        transport: str | None = typer.Option(
            None,
            "--transport",
            help="ib | roce | efa | socket (when neither NCCL INFO nor perftest's Link type says).",
        ),
        algorithm: str | None = typer.Option(
            None,
            "--algorithm",
            help="ring | tree | nvls | nvls-tree | auto: what NCCL ran, when NCCL INFO lines do not say "
            "(default: NCCL's tuner choice by the model).",
        ),
        as_json: bool = typer.Option(
            False, "--json", help="Print one JSON object: fits, transport, parameters."
        ),
        report: Path | None = typer.Option(
            None, "--report", help="Write a self-contained HTML report (model vs measured)."
        ),
    ) -> None:
        """Fit NIC efficiency, latency and NCCL's pipeline term to your own measurements."""
        from aifabric.cli import parse_unit_flag, run_guarded

        def body() -> int:
            from aifabric import __version__
            from aifabric.calibrate import calibration, fit, parsers
            from aifabric.cli._outpaths import check_out_file, write_guarded

            fmax = int(parse_unit_flag("size", fit_max_bytes, "--fit-max-bytes", "256MiB", positive=True))
            rate = (
                parse_unit_flag("rate", nic_rate, "--nic-rate", "400Gbps", positive=True)
                if nic_rate
                else None
            )
            if gpus_per_node is not None and gpus_per_node < 1:
                raise InputError("must be ≥ 1", field="--gpus-per-node", value=gpus_per_node)
            g = gpu.lower() if gpu else None
            if g is not None and g not in ("h100", "h200", "b200"):
                raise InputError("unknown GPU", field="--gpu", value=gpu, allowed="h100, h200, b200")
            tr = transport.lower() if transport else None
            if tr is not None and tr not in TRANSPORT_WORDS:
                raise InputError(
                    "unknown transport",
                    field="--transport",
                    value=transport,
                    allowed=", ".join(TRANSPORT_WORDS),
                )
            if algorithm is not None and algorithm not in ("ring", "tree", "nvls", "nvls-tree", "auto"):
                raise InputError(
                    "unknown algorithm",
                    field="--algorithm",
                    value=algorithm,
                    allowed="ring, tree, nvls, nvls-tree, auto",
                )
            check_out_file(out, "--out")
            check_out_file(report, "--report")
            fits = []
            for f in files:
                run = parsers.parse_measurement(f)
                if run.kind == "nccl-tests":
                    fits.append(fit.fit_nccl(run, fmax, gpus_per_node, rate, g, tr, algorithm))
                else:
                    fits.append(fit.fit_perftest(run, fmax, rate, tr))
            doc = calibration.build(fits, fmax, __version__)
            write_guarded(lambda: calibration.write(doc, out), "--out", out)
            if report is not None:
                from aifabric.calibrate.report import write_report

                write_guarded(lambda: write_report(fits, doc, report), "--report", report)
            for f in fits:
                for n in f.notes:
                    typer.echo(f"note: {n}", err=True)
            if as_json:
                body = {
                    "fits": [r for f in fits for r in f.rows],
                    "transport": doc["transport"],
                    "parameters": doc["parameters"],
                    "quality": {Path(f.source).name: f.summary() for f in fits},
                    "sources": doc["sources"],
                    "out": str(out),
                    "report": str(report) if report else None,
                }
                typer.echo(dumps(calibration._plain(body), indent=2))
            else:
                _print(fits, doc, out, report)
            return 0

        run_guarded(body)


def _pct(x, signed: bool = True) -> str:
    return "—" if x is None else (f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%")


def _print(fits, doc: dict, out: Path, report: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    for f in fits:
        s = f.summary()
        t = Table(title=f"{Path(f.source).name} — {f.kind}, transport {f.transport}", show_lines=False)
        for c in ("size (B)", f"measured {f.quantity}", "model", "error", "held out"):
            t.add_column(c, justify="right")
        for r in f.rows:
            t.add_row(
                f"{r['size_bytes']:,}",
                f"{r['measured']:.4g}",
                f"{r['model']:.4g}",
                _pct(r["error"]),
                "yes" if r["held_out"] else "",
            )
        con.print(t)
        verdict = "met" if s["target_met"] else ("not met" if s["held_out_points"] else "no held-out points")
        con.print(
            f"fitted {s['fitted_points']} points (mean |error| {_pct(s['fit_mean_abs_error'], False)}); held out "
            f"{s['held_out_points']} (mean |error| {_pct(s['held_out_mean_abs_error'], False)}, max "
            f"{_pct(s['held_out_max_abs_error'], False)}; target 10 % {verdict})"
        )
    pt = Table(title=f"calibration → {out}")
    for c in ("transport", "parameter", "value", "unit", "how"):
        pt.add_column(c, overflow="fold", min_width=len(c) if c != "parameter" else 14)
    for tr, d in doc["parameters"].items():
        for name, p in d.items():
            pt.add_row(tr, name, f"{p['value']:.4g}", p["unit"], p["how"])
    con.print(pt)
    if report is not None:
        con.print(f"report: {report}")
