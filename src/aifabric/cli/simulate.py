"""``aifabric simulate SCENARIO.yaml [--json] [--out DIR] [--mode packet|flow]``.

Thin: load the scenario, call :func:`aifabric.sim.simulate` (or the flow model for ``--mode
flow``), print. A ``collective`` workload runs in both modes (packet: network step by network
step, :mod:`aifabric.sim.collective`); its JSON has a ``collective`` key. With ``--json``
stdout holds exactly one JSON object; the progress bar (runs longer than about a second) goes
to stderr. Exit 1 when a deadlock was detected.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate_cmd(
        scenario: Path = typer.Argument(..., help="Scenario YAML file."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (interface.md) on stdout."),
        out: Path | None = typer.Option(
            None,
            "--out",
            help="Write flows.parquet, ports.parquet, summary.json, "
            "fct.txt and pfc.txt (ns-3 HPCC formats) here.",
        ),
        mode: str | None = typer.Option(None, "--mode", help="packet (default) or flow; overrides sim.mode."),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
    ) -> None:
        """Packet-level simulation of a scenario: FCTs, PFC pauses, ECN marks, queues."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.errors import InputError
            from aifabric.scenario import load_scenario

            sc = load_scenario(scenario)
            m = mode or sc.sim.mode
            if m not in ("packet", "flow"):
                raise InputError("unknown mode", field="--mode", value=m, allowed="packet, flow")
            if m == "flow":
                return _flow(sc, as_json, out)
            from aifabric.sim import simulate

            try:
                with _Progress(sc.sim.until_ps, enabled=progress and sc.sim.progress) as bar:
                    res = simulate(sc, progress=bar.update)
            except InputError as exc:
                raise (exc if exc.file else exc.with_file(str(scenario))) from None
            if out is not None:
                res.save(out)
            if as_json:
                sys.stdout.write(json.dumps(res.to_dict()) + "\n")
            else:
                _print(res, out)
            return 1 if res.summary["deadlock"] else 0

        run_guarded(body)


def _flow(sc, as_json: bool, out: Path | None) -> int:
    from aifabric.errors import InputError

    try:
        from aifabric.flow.scenario import simulate_flow_scenario
    except ImportError:  # pragma: no cover
        raise InputError("flow mode is not available in this build", field="--mode") from None
    flows = None
    if sc.workload is not None and sc.workload.kind != "collective" and sc.topology is not None:
        # the packet engine's traffic generator, so both engines see identical flows
        from aifabric.topology import from_spec
        from aifabric.workload.traffic import flows_for

        flows = flows_for(sc, from_spec(sc.topology))
        flows["start_us"] = flows["start_ps"] / 1e6
    res = simulate_flow_scenario(sc, flows=flows)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(
            json.dumps({k: v for k, v in res.items() if k != "flows"}, indent=2)
        )
    if as_json:
        sys.stdout.write(json.dumps(res, default=float) + "\n")
    else:
        typer.echo(json.dumps(res.get("summary", {}), indent=2, default=float))
    return 0


class _Progress:
    """A rich progress bar on stderr that appears only once a run has taken more than 1 s."""

    def __init__(self, until_ps: int, enabled: bool):
        self.until = until_ps
        self.enabled = enabled and sys.stderr.isatty()
        self.t0 = time.perf_counter()
        self.bar = None
        self.task = None

    def __enter__(self):
        return self

    def update(self, now_ps: int, events: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.t0 < 1.0:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TextColumn("{task.fields[sim]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("sim", total=self.until, sim="")
        self.bar.update(
            self.task,
            completed=min(now_ps, self.until),
            sim=f"{now_ps / 1e6:,.0f} µs simulated, {events / 1e6:.1f} M events",
        )

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
        return False


def _print(res, out: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    s, e = res.summary, res.engine
    con = Console()
    t = Table(title=f"{res.scenario}: packet-level simulation", show_header=True)
    t.add_column("metric")
    t.add_column("value", justify="right")

    def fmt(v, unit=""):
        if v is None:
            return "—"
        if isinstance(v, float):
            return f"{v:,.2f}{unit}"
        return f"{v:,}{unit}" if not isinstance(v, bool) else str(v).lower()

    rows = [
        ("flows completed", f"{s['completed_flows']:,} / {s['flows']:,}"),
        (
            "FCT p50 / p99 / max",
            f"{fmt(s['fct_p50_us'])} / {fmt(s['fct_p99_us'])} / {fmt(s['fct_max_us'])} µs",
        ),
        ("slowdown p50 / p99", f"{fmt(s['slowdown_p50'])} / {fmt(s['slowdown_p99'])}"),
        ("goodput", fmt(s["goodput_gbps"], " Gb/s")),
        ("Jain fairness", fmt(s["jain_fairness"])),
        ("drops", fmt(s["drops"])),
        ("PFC PAUSE frames", fmt(s["pause_frames"])),
        ("paused time (sum over ports)", fmt(s["pause_time_us"], " µs")),
        ("ECN marks", fmt(s["ecn_marks"])),
        ("max queue", fmt(s["max_queue_bytes"], " B")),
        ("deadlock", fmt(s["deadlock"])),
        ("engine", f"{e['events']:,} events, {e['packets']:,} data packets, {e['wall_s']:.2f} s wall"),
    ]
    if "ib_vl_buffer_bytes" in e:
        rows.append(("IB VL buffer", f"{e['ib_vl_buffer_bytes']:,} B"))
    if "injected_pauses" in s:  # fabric.pause_storms (not in the PFC rows above)
        rows.append(
            (
                "injected PAUSE (pause_storms)",
                f"{s['injected_pauses']:,} pauses, {fmt(s['injected_pause_time_us'], ' µs')}",
            )
        )
    for o in e.get("pfc_overrides", []):
        what = (
            f"xoff {o['xoff_bytes']:,} B / xon {o['xon_bytes']:,} B"
            if o["mode"] == "static"
            else f"dynamic alpha {o['alpha']:g}"
        )
        rows.append(
            (f"PFC override: {', '.join(o['switches'][:4])}{' ...' if len(o['switches']) > 4 else ''}", what)
        )
    if getattr(res, "collective", None) is not None:  # network step by network step (aifabric.sim.collective)
        c = res.to_dict(flows=False)["collective"]  # NaN (an unfinished step) → None
        rows.append(
            (f"collective {c['op']} ({c['algorithm']})", f"{c['ranks']} ranks, {c['size_bytes']:,} B")
        )
        rows.append(("collective time", fmt(c["time_s"] * 1e6 if c["time_s"] is not None else None, " µs")))
        rows.append(("algbw / busbw", f"{fmt(c['algbw_gbps'], ' GB/s')} / {fmt(c['busbw_gbps'], ' GB/s')}"))
        rows.append(("network steps simulated / total", f"{e['steps_simulated']} / {e['steps_total']}"))
    for k, v in rows:
        t.add_row(k, v)
    con.print(t)
    if out is not None:
        con.print(f"wrote {out}/flows.parquet, ports.parquet, summary.json, fct.txt, pfc.txt")
