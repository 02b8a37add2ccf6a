"""``aifabric plan`` — fabric design + bill of materials + cost for IB and/or RoCE."""

from __future__ import annotations

from pathlib import Path

import typer

from aifabric.cli._json import dumps
from aifabric.errors import InputError


def _parse_rate_gbps(text: str) -> float:
    from aifabric.cli import parse_unit_flag

    if text.strip().replace(".", "", 1).isdigit():  # a bare number is Gb/s, as the help says
        text = f"{text.strip()}Gbps"
    return parse_unit_flag("rate", text, "--nic-rate", "e.g. 400Gbps, 400G or 400") / 1e9


def _parse_lengths(text: str | None) -> dict[str, float]:
    from aifabric.design.cost import LINK_CLASSES
    from aifabric.units import UnitError, parse_length_m

    if not text:
        return {}
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(LINK_CLASSES):
        raise InputError(
            "expected three lengths",
            field="--lengths",
            value=text,
            allowed="host-leaf,leaf-spine,spine-core e.g. 5m,40m,300m",
        )
    out = {}
    for cls, p in zip(LINK_CLASSES, parts, strict=True):
        try:
            v = parse_length_m(p)
        except UnitError:
            raise InputError("bad length", field="--lengths", value=p, allowed="e.g. 5m or 0.3km") from None
        if v <= 0:
            raise InputError("length must be > 0", field="--lengths", value=p, allowed="e.g. 5m")
        out[cls] = v
    return out


def _parse_hall(text: str | None) -> float | None:
    from aifabric.units import UnitError, parse_length_m

    if not text:
        return None
    try:
        value = parse_length_m(text)
    except UnitError:
        raise InputError("bad length", field="--hall-size", value=text, allowed="e.g. 60m") from None
    if value <= 0:
        raise InputError("must be > 0", field="--hall-size", value=text, allowed="e.g. 60m")
    return value


TECH_WORDS = {
    "ib": ("infiniband",),
    "infiniband": ("infiniband",),
    "roce": ("roce",),
    "both": ("infiniband", "roce"),
}


def register(app: typer.Typer) -> None:
    @app.command("plan")
    def plan_cmd(
        gpus: int = typer.Option(1024, "--gpus", help="Number of GPUs (one NIC per GPU)."),
        gpu: str = typer.Option(
            "h100",
            "--gpu",
            help="GPU system catalog id: h100, h200, h800, b200, b300, gb200-nvl72, gb300-nvl72.",
        ),
        nic_rate: str | None = typer.Option(
            None,
            "--nic-rate",
            help="Per-GPU NIC rate, e.g. 400Gbps or 800Gbps (default: the GPU system's, e.g. 400G on B200).",
        ),
        technology: str = typer.Option("both", "--technology", help="ib | roce | both."),
        designs: list[str] | None = typer.Option(
            None,
            "--design",
            help="Named design to plan (repeatable; replaces --technology/--switch/--nic/--nic-rate), e.g. "
            "ib-ndr-400g, spectrum-x-400g, th5-sonic-400g, jericho3-ai-400g.",
        ),
        oversubscription: float = typer.Option(
            1.0, "--oversubscription", help="Leaf down:up ratio R (1 = non-blocking, 2 = 2:1)."
        ),
        switch: str | None = typer.Option(
            None, "--switch", help="Switch catalog id (default per technology)."
        ),
        nic: str | None = typer.Option(
            None, "--nic", help="NIC catalog id (default per technology and rate)."
        ),
        planes: int | None = typer.Option(
            None,
            "--planes",
            help="Independent network planes (NIC rate split over them; default: the NIC's port count "
            "when its ports share the rate, e.g. 2 × 400G on ConnectX-8 C8240, else 1).",
        ),
        lengths: str | None = typer.Option(
            None, "--lengths", help="Cable lengths host-leaf,leaf-spine,spine-core (default 5m,40m,300m)."
        ),
        server_cages: str | None = typer.Option(
            None,
            "--server-cages",
            help="twin-port (DGX-class: 2 NICs per flat-top OSFP module) | per-nic (PCIe HGX: one module "
            "per NIC port). Default: the GPU system's.",
        ),
        optics: str = typer.Option(
            "any", "--optics", help="Transceiver brand: any (cheapest) | nvidia | third-party."
        ),
        host_link_media: str = typer.Option(
            "auto",
            "--host-link-media",
            help="Host-link media: auto (the cheapest that reaches, one table and rule for both fabrics) | dac | acc | "
            "aec | aoc | optics.",
        ),
        rail_only: bool = typer.Option(
            False,
            "--rail-only",
            help="Rail-only design: no spine between rails (cross-rail traffic over NVLink).",
        ),
        max_tiers: int = typer.Option(3, "--max-tiers", help="Most switch tiers allowed (1, 2 or 3)."),
        hall_size: str | None = typer.Option(
            None,
            "--hall-size",
            help="Side of a square data hall, e.g. 60m: switch-to-switch runs = 2 × side (optics reach "
            "follows); --lengths wins where given.",
        ),
        dual_tor: bool = typer.Option(
            False,
            "--dual-tor",
            help="Dual-ToR: each NIC's rate as 2 half-rate legs on two leaves (RoCE: MLAG / EVPN "
            "multihoming). Refused for InfiniBand alone (no multi-chassis LAG); with both, IB is planned "
            "without it and says why.",
        ),
        spine_spares: int = typer.Option(
            0,
            "--spine-spares",
            help="Spines per plane beyond the non-blocking count (cabled, N+k; 2-tier fabrics).",
        ),
        lifetime_years: float | None = typer.Option(
            None, "--lifetime-years", help="TCO lifetime (default 5)."
        ),
        pue: float | None = typer.Option(None, "--pue", help="Data-centre PUE for TCO energy (default 1.3)."),
        electricity: float | None = typer.Option(
            None,
            "--electricity-usd-per-kwh",
            help="Electricity price for TCO (default 0.0806, EIA 2023 US industrial).",
        ),
        catalog_file: Path | None = typer.Option(
            None, "--catalog", help="YAML file overriding catalog records."
        ),
        storage_nodes: int | None = typer.Option(
            None,
            "--storage-nodes",
            help="Price the hybrid design: back end + an Ethernet front-end/storage network with this many "
            "storage nodes.",
        ),
        checkpoint: float | None = typer.Option(
            None,
            "--checkpoint-gbytes-per-s",
            help="Price the hybrid design with storage nodes sized for this checkpoint bandwidth (GB/s).",
        ),
        rent: bool = typer.Option(
            False, "--rent-vs-build", help="Add rent vs build: break-even months against renting the GPUs."
        ),
        build_dir: Path | None = typer.Option(
            None,
            "--build",
            help="Write the build artefacts into this new folder: cable plan, port maps, rack layout, "
            "expected LLDP / ibnetdiscover neighbours, Slurm topology.conf, Kubernetes labels (link-class "
            "lengths come from the layout unless --lengths / --hall-size are given).",
        ),
        layout_file: Path | None = typer.Option(
            None, "--layout", help="With --build: YAML/JSON file overriding the layout assumptions."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        as_csv: bool = typer.Option(False, "--csv", help="Print the bills of materials as CSV."),
        as_md: bool = typer.Option(False, "--markdown", help="Print Markdown tables."),
    ) -> None:
        """Design a rail-optimised fabric for N GPUs and price its bill of materials."""
        from aifabric.cli import run_guarded

        def body() -> int:
            import math

            from aifabric.design.plan import plan
            from aifabric.hardware.catalog import load_catalog
            from aifabric.scenario import MAX_COUNT

            if sum([as_json, as_csv, as_md]) > 1:
                raise InputError(
                    "choose one output format", field="--json/--csv/--markdown", allowed="at most one of them"
                )
            techs = TECH_WORDS.get(technology.lower())
            if techs is None:
                raise InputError(
                    "unknown technology", field="--technology", value=technology, allowed="ib, roce, both"
                )
            if not 1 <= gpus <= MAX_COUNT:
                raise InputError("out of range", field="--gpus", value=gpus, allowed=f"1..{MAX_COUNT:,}")
            if not (math.isfinite(oversubscription) and 1 <= oversubscription <= 64):
                raise InputError(
                    "out of range",
                    field="--oversubscription",
                    value=oversubscription,
                    allowed="1 (non-blocking), 2 (2:1), ... up to 64 (as compare's)",
                )
            if checkpoint is not None and not (math.isfinite(checkpoint) and checkpoint >= 0):
                raise InputError(
                    "must be a finite number ≥ 0", field="--checkpoint-gbytes-per-s", value=checkpoint
                )
            if storage_nodes is not None and not 0 <= storage_nodes <= MAX_COUNT:
                raise InputError(
                    "out of range", field="--storage-nodes", value=storage_nodes, allowed=f"0..{MAX_COUNT:,}"
                )
            overrides = {}
            for key, value, flag in (
                ("lifetime_years", lifetime_years, "--lifetime-years"),
                ("pue", pue, "--pue"),
                ("electricity_usd_per_kwh", electricity, "--electricity-usd-per-kwh"),
            ):
                if value is not None:
                    if not math.isfinite(value) or value <= 0 or (key == "pue" and value < 1):
                        raise InputError(
                            "out of range", field=flag, value=value, allowed="PUE ≥ 1; other values > 0"
                        )
                    overrides[key] = value
            cat = load_catalog(catalog_file)
            common = dict(
                gpu=gpu.lower(),
                oversubscription=oversubscription,
                lengths_m=_parse_lengths(lengths),
                server_cages=server_cages,
                optics=optics,
                rail_only=rail_only,
                tco_inputs=overrides or None,
                **({"host_link_media": host_link_media} if host_link_media != "auto" else {}),
                max_tiers=max_tiers,
                data_hall_m=_parse_hall(hall_size),
                **({"dual_tor": True} if dual_tor else {}),
                **({"spine_spares": spine_spares} if spine_spares else {}),
            )
            if spine_spares < 0:
                raise InputError(
                    "must be a whole number ≥ 0",
                    field="--spine-spares",
                    value=spine_spares,
                    allowed="0, 1, 2, ...",
                )
            if designs:
                from aifabric.design.plan import plan_design

                extra = {"planes": planes} if planes is not None else {}
                plans = [plan_design(d, gpus, cat, **common, **extra) for d in designs]
            else:
                plans = plan(
                    gpus,
                    techs,
                    cat,
                    nic_rate_gbps=_parse_rate_gbps(nic_rate) if nic_rate else None,
                    switch_id=switch,
                    nic_id=nic,
                    planes=planes,
                    **common,
                )
            if layout_file is not None and build_dir is None:
                raise InputError("needs --build", field="--layout", value=str(layout_file))
            built = None
            if build_dir is not None:
                from aifabric.cli.build import build_plans

                plans, built = build_plans(
                    plans, cat, build_dir, layout_file, sized=not (lengths or hall_size), common=common
                )
            out = {"fabrics": [p.to_dict() for p in plans], "catalog_prices": cat.price_summary()}
            if built is not None:
                out["build"] = built
            if storage_nodes is not None or checkpoint is not None or rent:
                from aifabric.design.tco import price_hybrid, rent_vs_build

                for p, f in zip(plans, out["fabrics"], strict=True):
                    if storage_nodes is not None or checkpoint is not None:
                        if (storage_nodes or 0) < 0 or (checkpoint or 0) < 0:
                            raise InputError(
                                "must be ≥ 0",
                                field="--storage-nodes/--checkpoint-gbytes-per-s",
                                allowed="≥ 0",
                            )
                        f["hybrid"] = price_hybrid(
                            p,
                            cat,
                            storage_nodes=storage_nodes,
                            checkpoint_gbytes_per_s=checkpoint,
                            overrides=overrides or None,
                        ).to_dict()
                    if rent:
                        f["rent_vs_build"] = rent_vs_build(p, cat, overrides=overrides or None).to_dict()
            from aifabric.design.plan import radix_note

            note = radix_note(plans)
            if note:
                out["radix_note"] = note
            if len(plans) == 2 and not designs:
                ib, roce = plans
                out["comparison"] = {
                    "roce_over_ib_capex": round(roce.capex_usd / ib.capex_usd, 4),
                    "capex_difference_usd": round(ib.capex_usd - roce.capex_usd, 2),
                    "roce_over_ib_power": round(roce.power_w / ib.power_w, 4),
                    "roce_over_ib_tco": round(roce.tco.tco_usd / ib.tco.tco_usd, 4),
                    "tco_difference_usd": round(ib.tco.tco_usd - roce.tco.tco_usd, 2),
                    "note": "switch and optics prices without a public source are input ranges (see each "
                    "fabric's capex_input_usd and the BOM's price_input lines): the ratio is conditional on them",
                }
            if as_json:
                typer.echo(dumps(out, indent=2))
            elif built is not None and not (as_csv or as_md):
                _print_rich(out)
                from aifabric.cli.build import print_build

                print_build(built)
            elif as_csv:
                _print_csv(out)
            elif as_md:
                typer.echo(_markdown(out))
            else:
                _print_rich(out)
            return 0

        run_guarded(body)


def _print_csv(out: dict) -> None:
    import csv
    import sys

    cols = [
        "technology",
        "where",
        "category",
        "item",
        "catalog_id",
        "count",
        "unit_price_usd",
        "total_usd",
        "unit_power_w",
        "total_power_w",
        "estimate",
        "price_source",
    ]
    w = csv.DictWriter(sys.stdout, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for f in out["fabrics"]:
        for line in f["bom"]:
            w.writerow({"technology": f["technology"], **{k: line[k] for k in cols if k in line}})


def _summary_rows(f: dict) -> list[tuple[str, str]]:
    sw = ", ".join(f"{k} {v}" for k, v in f["switches"].items())
    lo, hi = f["capex_range_usd"]
    rows = [
        ("switch × radix", f"{f['switch']} × {f['radix']} @ {f['link_rate_gbps']:g}G ({f['design']})"),
        (
            "NIC",
            f"{f['nic']} @ {f['nic_rate_gbps']:g}G" + (f", {f['planes']} planes" if f["planes"] > 1 else ""),
        ),
        ("tiers", str(f["tiers"])),
        ("switches", f"{f['switch_count']} ({sw})"),
        ("leaf ports down/up", f"{f['leaf_ports_down']}/{f['leaf_ports_up']} ({f['oversubscription']:g}:1)"),
        ("NICs / transceivers / cables", f"{f['nics']:,} / {f['transceivers']:,} / {f['cables']:,}"),
        ("media", ", ".join(f"{k} {v} {f['cable_lengths_m'][k]:g} m" for k, v in f["media"].items())),
        ("capex", f"${f['capex_usd']:,.0f} (range ${lo:,.0f}–${hi:,.0f})"),
        ("  of which input-priced", f"${f['capex_input_usd']:,.0f} (no public price: replace with quotes)"),
        ("network capex per GPU", f"${f['network_capex_per_gpu_usd']:,.0f}"),
        ("power", f"{f['power_w'] / 1000:,.1f} kW ({f['power_per_gpu_w']:.0f} W per GPU)"),
    ]
    fe = f.get("front_end") or {}
    if fe:
        rows.append(
            (
                "storage / front-end NICs",
                f"{fe['per_node']} × {fe['nic']} per node ({fe['count']:,}): listed, ship with the servers; "
                "network priced by --storage-nodes",
            )
        )
    for note in f.get("notes", []):
        rows.append(("note", note))
    if "tco_usd" in f:
        t = f["tco"]
        tlo, thi = f["tco_range_usd"]
        rows += [
            (
                f"TCO, {t['lifetime_years']:g} years",
                f"${f['tco_usd']:,.0f} (range ${tlo:,.0f}–${thi:,.0f}; ${f['tco_per_gpu_usd']:,.0f} per GPU)",
            ),
            (
                "  spares / support+licences per year / energy per year",
                f"${t['spares_usd']:,.0f} / ${t['support_usd_per_year'] + t['licences_usd_per_year']:,.0f}"
                f" / ${t['energy_usd_per_year']:,.0f}",
            ),
        ]
    return rows


def _print_rich(out: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=max(100, Console().width))
    for f in out["fabrics"]:
        uet = " (Ultra Ethernet transport)" if f.get("transport") == "uet" else ""
        t = Table(title=f"{f['technology']} fabric{uet} for {f['gpus']:,} × {f['gpu']}", show_header=False)
        t.add_column("", style="bold")
        t.add_column("")
        for k, v in _summary_rows(f):
            t.add_row(k, v)
        con.print(t)
        b = Table(
            title=f"{f['technology']} bill of materials (* = estimate, † = input range without a public price; "
            "--json has each basis)"
        )
        for col, just in (
            ("where", "left"),
            ("catalog id", "left"),
            ("count", "right"),
            ("unit USD", "right"),
            ("total USD", "right"),
            ("kW", "right"),
            ("price", "left"),
        ):
            b.add_column(col, justify=just, no_wrap=True)
        for line in f["bom"]:
            b.add_row(
                line["where"],
                line["catalog_id"],
                f"{line['count']:,}",
                f"{line['unit_price_usd']:,.0f}"
                + ("†" if line["price_input"] else "*" if line["estimate"] else ""),
                f"{line['total_usd']:,.0f}",
                f"{line['total_power_w'] / 1000:,.1f}",
                line["price_source"].split(":")[0],
            )
        con.print(b)
    if "comparison" in out:
        c = out["comparison"]
        con.print(
            f"RoCE capex is {c['roce_over_ib_capex']:.0%} of InfiniBand "
            f"(${c['capex_difference_usd']:,.0f} less); TCO {c['roce_over_ib_tco']:.0%}; "
            f"power {c['roce_over_ib_power']:.0%}. Conditional on the input-priced parts (†)."
        )
    for f in out["fabrics"]:
        if "hybrid" in f:
            h = f["hybrid"]
            con.print(
                f"hybrid ({f['technology']} back end + Ethernet front end on {h['front_end_switch']}, "
                f"{h['front_end_endpoints']} ports, {h['storage_nodes']} storage nodes): capex "
                f"${h['capex_usd']:,.0f}, TCO ${h['tco_usd']:,.0f} (front end ${h['front_end_capex_usd']:,.0f})"
            )
        if "rent_vs_build" in f:
            r = f["rent_vs_build"]
            be = "never" if r["break_even_months"] is None else f"{r['break_even_months']:.1f} months"
            con.print(
                f"rent vs build ({f['technology']}): renting at ${r['rent_usd_per_gpu_hour']:.2f}/GPU-hour costs "
                f"${r['rent_usd_per_month']:,.0f}/month; building ${r['build_capex_usd']:,.0f} + "
                f"${r['build_opex_usd_per_month']:,.0f}/month breaks even after {be}"
            )
    if out.get("radix_note"):
        con.print(out["radix_note"])
    con.print("[dim]Not included: " + "; ".join(out["fabrics"][0]["not_included"]) + ".[/dim]")


def _markdown(out: dict) -> str:
    lines = []
    for f in out["fabrics"]:
        lines.append(f"### {f['technology']} fabric for {f['gpus']:,} × {f['gpu']}\n")
        lines.append("| | |\n|---|---|")
        lines += [f"| {k} | {v} |" for k, v in _summary_rows(f)]
        lines.append("\n| where | item | catalog id | count | unit USD | total USD | price source |")
        lines.append("|---|---|---|--:|--:|--:|---|")
        for x in f["bom"]:
            star = "†" if x["price_input"] else "*" if x["estimate"] else ""
            lines.append(
                f"| {x['where']} | {x['item']} | {x['catalog_id']} | {x['count']:,} | "
                f"{x['unit_price_usd']:,.0f}{star} | {x['total_usd']:,.0f} | {x['price_source']} |"
            )
        lines.append("")
    if "comparison" in out:
        c = out["comparison"]
        lines.append(
            f"RoCE capex is {c['roce_over_ib_capex']:.0%} of InfiniBand "
            f"(${c['capex_difference_usd']:,.0f} less); TCO {c['roce_over_ib_tco']:.0%}. `*` = estimated price, "
            "`†` = input range (no public price)."
        )
    return "\n".join(lines)
