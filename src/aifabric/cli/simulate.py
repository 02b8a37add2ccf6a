"""``aifabric simulate SCENARIO.yaml [--json] [--out DIR [--force]] [--mode packet|flow]``.

Thin: :func:`aifabric.cli._preflight.prepare` checks everything first (the scenario, topology,
fabric references, flows, memory, ``--out``; ``aifabric validate`` runs the same checks), then
:func:`aifabric.sim.simulate` (or the flow model for ``--mode flow``) runs and the result is
printed. A ``collective`` workload runs in both modes (packet: network step by network step,
:mod:`aifabric.sim.collective`); its JSON has a ``collective`` key. With ``--json`` stdout holds
exactly one JSON object; the progress bar (runs longer than about a second), the first-run compile
notice and warnings go to stderr. Exit 1 when a deadlock was detected or a limit (``sim.until``,
``sim.max_events``) stopped the run before every flow finished (``summary.complete`` false).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import typer

from aifabric.cli._json import dumps


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate_cmd(
        scenario: Path = typer.Argument(..., help="Scenario YAML file."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (interface.md) on stdout."),
        out: Path | None = typer.Option(
            None,
            "--out",
            help="Write the results here (packet: flows.parquet, ports.parquet, summary.json, fct.txt, "
            "pfc.txt in ns-3 HPCC formats; flow: flows.parquet, links.parquet, summary.json, flows.json). "
            "The folder must be new or empty unless --force.",
        ),
        force: bool = typer.Option(
            False, "--force", help="With --out: replace the results of an earlier run in that folder."
        ),
        mode: str | None = typer.Option(None, "--mode", help="packet (default) or flow; overrides sim.mode."),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
        calibration: Path | None = typer.Option(
            None,
            "--calibration",
            help="Calibration file from `aifabric calibrate --out`: packet mode applies its NIC efficiency "
            "(fabric.nic_efficiency) and perftest latency (fabric.nic_latency) for the scenario's transport, "
            "warning when the file measured another one.",
        ),
        counters: str | None = typer.Option(
            None,
            "--counters",
            help="prometheus | sonic | perfquery: write the run's port counters in that format to "
            "--counters-out (what `aifabric diagnose --counters` reads; packet mode).",
        ),
        counters_out: Path | None = typer.Option(None, "--counters-out", help="File for --counters."),
    ) -> None:
        """Packet-level simulation of a scenario: FCTs, PFC pauses, ECN marks, queues."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.cli._preflight import in_file, prepare
            from aifabric.errors import InputError

            # every check first (scenario, topology, fabric, flows, memory, --out): nothing runs
            # until all pass, and `aifabric validate` runs these same checks
            _check_counters(counters, counters_out)
            prep = prepare(scenario, mode, out, force, json_flows=as_json)
            sc = prep.scenario
            if counters is not None and prep.mode == "flow":
                raise InputError(
                    "the flow model has no per-port PAUSE / ECN counters",
                    field="--counters",
                    allowed="packet mode (--mode packet)",
                )
            cal = None
            if calibration is not None:
                from aifabric.calibrate import load

                cal = load(calibration)
            if prep.mode == "flow":
                if cal is not None:
                    typer.echo(
                        f"warning: {calibration}: --calibration applies to the packet engine; "
                        "--mode flow runs uncalibrated",
                        err=True,
                    )
                return _flow(prep, as_json, out)
            from aifabric.sim import simulate

            applied = None
            if cal is not None:
                from aifabric.calibrate import calibrate_scenario

                sc, applied = calibrate_scenario(sc, cal, prep.topology)
                for w in dict.fromkeys(cal.warnings):
                    typer.echo(f"warning: {w}", err=True)

            _compile_notice()
            try:
                with (
                    warnings.catch_warnings(record=True) as caught,
                    _Progress(sc.sim.until_ps, enabled=progress and sc.sim.progress) as bar,
                ):
                    warnings.simplefilter("always", RuntimeWarning)
                    res = simulate(sc, flows=prep.flows, topology=prep.topology, progress=bar.update)
            except InputError as exc:
                raise in_file(exc, str(scenario)) from None
            if applied is not None:
                res.engine["calibration"] = applied
            for w in caught:  # e.g. a lossless fabric that dropped packets: one line each
                if issubclass(w.category, RuntimeWarning):
                    typer.echo(f"warning: {scenario}: {' '.join(str(w.message).split())}", err=True)
            if out is not None:
                res.save(out)
            if counters is not None:
                from aifabric.diagnose.export import export_run

                counters_out.write_text(export_run(res, sc, prep.topology, counters))
            if as_json:
                sys.stdout.write(dumps(res.to_dict()) + "\n")
            else:
                _print(res, out)
            return _outcome(res.summary, res.engine, str(scenario))

        run_guarded(body)


def _check_counters(fmt: str | None, out: Path | None) -> None:
    """``--counters`` and ``--counters-out`` come together; the format is one we write."""
    from aifabric.errors import InputError

    formats = ("prometheus", "sonic", "perfquery")
    if fmt is not None and fmt not in formats:
        raise InputError("unknown counter format", field="--counters", value=fmt, allowed=", ".join(formats))
    if (fmt is None) != (out is None):
        raise InputError(
            "--counters and --counters-out go together",
            field="--counters" if fmt is None else "--counters-out",
            allowed="--counters prometheus|sonic|perfquery --counters-out FILE",
        )
    if out is not None and out.parent and not out.parent.exists():
        raise InputError("folder does not exist", field="--counters-out", value=str(out))


def _outcome(summary: dict, engine: dict, file: str) -> int:
    """Exit code of a finished run: 1 when a deadlock was found or a limit stopped the run before
    every flow finished (then one line on stderr says which; the results are marked incomplete)."""
    if summary.get("deadlock"):
        return 1
    if summary.get("complete", True):
        return 0
    status = engine.get("status")
    if status == "event budget":
        why = (
            f"the run hit sim.max_events ({engine.get('max_events', 0):,} events) before every flow "
            f"finished; results are incomplete (raise sim.max_events or shorten the workload)"
        )
    elif status == "time limit":
        why = (
            f"the run reached sim.until ({engine.get('sim_time_us', 0):,.0f} us) before every flow "
            f"finished; results are incomplete (raise sim.until)"
        )
    else:
        why = f"not every flow finished (status: {status}); results are incomplete"
    typer.echo(f"warning: {file}: {why}", err=True)
    return 1


COMPILE_NOTICE = "compiling the simulator kernels (first run only, about a minute)"


def cache_is_cold(dispatcher) -> bool:
    """Whether numba's on-disk cache lacks a compiled ``dispatcher`` (an ``@njit(cache=True)``
    function) for its current source: reads the small cache index only (numba's own check that
    the index matches the source file's stamp), ~1 ms; False when numba's JIT is off or the
    check itself fails (no notice rather than a wrong one)."""
    try:
        from numba.core import config
        from numba.core.caching import FunctionCache

        if config.DISABLE_JIT or dispatcher.stats.cache_hits or dispatcher.overloads:
            return False
        return not FunctionCache(dispatcher.py_func)._cache_file._load_index()
    except Exception:  # noqa: BLE001 - numba internals may change; the notice is optional
        return False


def _compile_notice(mode: str = "packet") -> None:
    """On a cold numba cache, say on stderr that this run compiles first (about a minute)."""
    if mode == "packet":
        from aifabric.sim.aot import uses_aot

        if uses_aot():  # an ahead-of-time build (python -m aifabric.sim.aot): nothing to compile
            return
        from aifabric.sim import kernel as K

        fn = K.run
    else:
        from aifabric.flow import _kernels

        fn = _kernels.drain
    if cache_is_cold(fn):
        typer.echo(COMPILE_NOTICE, err=True)


def _flow(prep, as_json: bool, out: Path | None) -> int:
    from aifabric.cli._preflight import in_file
    from aifabric.errors import InputError

    try:
        from aifabric.flow.engine import link_table
        from aifabric.flow.scenario import simulate_flow_scenario
    except ImportError:  # pragma: no cover
        raise InputError("flow mode is not available in this build", field="--mode") from None
    from aifabric.sim.results import dumps_strict

    sc = prep.scenario
    flows = None
    if prep.flows is not None:
        # the packet engine's traffic generator, so both engines see identical flows
        flows = prep.flows.to_frame()
        flows["start_us"] = flows["start_ps"] / 1e6
    tables: dict = {}
    _compile_notice("flow")
    try:
        res = simulate_flow_scenario(sc, flows=flows, topology=prep.topology, tables=tables)
    except InputError as exc:
        raise in_file(exc, prep.file) from None
    if out is not None:
        from aifabric.sim.results import save_flow_mode

        df = tables["flows"]
        save_flow_mode(out, res, df, link_table(prep.topology, df))
    if as_json:
        sys.stdout.write(dumps_strict(res) + "\n")
    else:
        _print_flow(res, out)
    return _outcome(res.get("summary", {}), res.get("engine", {}), prep.file)


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


def _fmt(v, unit: str = "") -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.2f}{unit}"
    return f"{v:,}{unit}" if not isinstance(v, bool) else str(v).lower()


def _fct_rows(s: dict) -> list[tuple[str, str]]:
    """The rows both engines print first: completion, FCT, slowdown, goodput, fairness."""
    return [
        ("flows completed", f"{s['completed_flows']:,} / {s['flows']:,}"),
        (
            "FCT p50 / p99 / max",
            f"{_fmt(s['fct_p50_us'])} / {_fmt(s['fct_p99_us'])} / {_fmt(s['fct_max_us'])} µs",
        ),
        ("slowdown p50 / p99", f"{_fmt(s['slowdown_p50'])} / {_fmt(s['slowdown_p99'])}"),
        ("goodput", _fmt(s["goodput_gbps"], " Gb/s")),
        ("Jain fairness", _fmt(s["jain_fairness"])),
    ]


def _collective_rows(c: dict) -> list[tuple[str, str]]:
    """A collective's rows; busbw in GB/s as nccl-tests prints it (the keys' "gbps" names mean GB/s)."""
    return [
        (f"collective {c['op']} ({c['algorithm']})", f"{c['ranks']} ranks, {c['size_bytes']:,} B"),
        ("collective time", _fmt(c["time_s"] * 1e6 if c.get("time_s") is not None else None, " µs")),
        ("algbw / busbw", f"{_fmt(c['algbw_gbps'], ' GB/s')} / {_fmt(c['busbw_gbps'], ' GB/s')}"),
    ]


def _show(title: str, rows: list[tuple[str, str]]):
    """The metric / value table on stdout; the console, for what follows."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, show_header=True)
    t.add_column("metric")
    t.add_column("value", justify="right")
    for k, v in rows:
        t.add_row(k, v)
    con = Console()
    con.print(t)
    return con


def _print_flow(res: dict, out: Path | None) -> None:
    """The flow model's result as a table (``--json`` prints the whole result)."""
    s, e = res.get("summary", {}), res.get("engine", {})
    rows = _fct_rows(s) + [
        ("deadlock", _fmt(s["deadlock"])),
        ("queues", "not modelled: drops, PAUSE, ECN marks and queue depth are 0 by construction"),
        ("engine", f"flow level, {e.get('events', 0):,} rate events, {e.get('wall_s', 0.0):.2f} s wall"),
    ]
    if res.get("collective"):
        rows += _collective_rows(res["collective"])
    uet = e.get("uet")
    if uet:
        rows.append(
            (
                "Ultra Ethernet",
                f"trimming {_fmt(uet.get('trimming'))}, {uet.get('ev_count')} EVs, "
                f"mean flow efficiency {_fmt(uet.get('mean_flow_efficiency'))}",
            )
        )
    _show(f"{res.get('scenario', '')}: flow-level model", rows)
    if out is not None:
        typer.echo(f"wrote {out}/flows.parquet, links.parquet, summary.json, flows.json")


def _print(res, out: Path | None) -> None:
    s, e = res.summary, res.engine
    fmt = _fmt
    rows = _fct_rows(s) + [
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
    if "calibration" in e:
        c = e["calibration"]
        parts = []
        if "nic_efficiency" in c:
            parts.append(f"NIC efficiency {c['nic_efficiency']:.3f}")
        if "nic_latency_us" in c:
            parts.append(f"NIC latency {c['nic_latency_us']:.2f} µs")
        rows.append(
            ("calibration", f"{c['file']} ({c['transport']}): {', '.join(parts) or 'nothing applied'}")
        )
    if "hpcc_int_bytes" in e:
        rows.append(("HPCC INT bytes", f"{e['hpcc_int_bytes']} B per data packet and ACK"))
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
        rows += _collective_rows(res.to_dict(flows=False)["collective"])  # NaN (an unfinished step) → None
        rows.append(("network steps simulated / total", f"{e['steps_simulated']} / {e['steps_total']}"))
    con = _show(f"{res.scenario}: packet-level simulation", rows)
    if out is not None:
        con.print(f"wrote {out}/flows.parquet, ports.parquet, summary.json, fct.txt, pfc.txt")
