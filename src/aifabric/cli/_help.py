"""``--help`` laid out for people: options grouped into panels (buyer, design, workload, risk,
output) and two examples under every command. Applied once to the registered commands, so each
command module keeps only its options' own help text."""

from __future__ import annotations

import inspect

BUYER, DESIGN, WORKLOAD, RISK, OUTPUT = "Buyer", "Design", "Workload", "Risk", "Output"

# options that mean the same on every command
COMMON = {
    "--json": OUTPUT,
    "--report": OUTPUT,
    "--out": OUTPUT,
    "--csv": OUTPUT,
    "--markdown": OUTPUT,
    "--details": OUTPUT,
    "--build": OUTPUT,
    "--layout": OUTPUT,
    "--force": OUTPUT,
    "--progress": OUTPUT,
    "--format": OUTPUT,
    "--verbose": OUTPUT,
    "--width": OUTPUT,
    "--columns": OUTPUT,
    "--limit": OUTPUT,
    "--catalog": BUYER,
    "--calibration": WORKLOAD,
}
_BUYER = "--gpus --gpu --budget --growth --jitter-sensitivity --team-expertise --network-budget --p99-budget"
_DESIGN = (
    "--designs --design --technology --switch --nic --nic-rate --planes --rail-only --max-tiers "
    "--oversubscription --lengths --hall-size --host-link-media --lossy-roce --dual-tor --spine-spares "
    "--storage-nodes --checkpoint-gbytes-per-s --roce-routing --ib-routing --routing --server-cages --optics "
    "--lifetime-years --pue --electricity-usd-per-kwh --rent-vs-build --fabric --sharp --algorithm --engine"
)
_WORKLOAD = (
    "--workload --model --compute-efficiency --ttft-ms --itl-ms --checkpoint-period --placement --occupancy "
    "--background-jobs --qps-per-connection --storage-on-fabric --min-bytes --max-bytes --nic-efficiency"
)
_RISK = "--ib-cc --congestion-share --tuning --switch-failures"
BY_FLAG = {
    **{f: BUYER for f in _BUYER.split()},
    **{f: DESIGN for f in _DESIGN.split()},
    **{f: WORKLOAD for f in _WORKLOAD.split()},
    **{f: RISK for f in _RISK.split()},
    **COMMON,
}
PANELLED = ("compare", "train", "plan", "collective")  # the commands with enough options to group

EXAMPLES = {
    "compare": (
        "aifabric compare --gpus 2048 --model llama3-405b",
        "aifabric compare scenarios/advisor/rule2-budget.yaml --details --report report.html",
    ),
    "train": (
        "aifabric train --gpus 512 --model llama3-70b --fabric ib",
        "aifabric train scenarios/advisor/rule3-thousand-gpu.yaml --json",
    ),
    "plan": (
        "aifabric plan --gpus 1024 --technology both",
        "aifabric plan --gpus 4096 --nic-rate 800G --technology roce --json",
    ),
    "simulate": (
        "aifabric simulate scenarios/incast32.yaml",
        "aifabric simulate scenarios/perm128-dcqcn.yaml --mode flow --out results/perm128",
    ),
    "risk": ("aifabric risk --list", "aifabric risk --technology infiniband --json"),
    "collective": (
        "aifabric collective all-reduce --gpus 64 --technology roce",
        "aifabric collective all-gather --gpus 1024 --nic-rate 800G --json",
    ),
    "calibrate": (
        "aifabric calibrate all_reduce_perf.txt --out cal.yaml",
        "aifabric calibrate all_reduce_perf.txt ib_write_bw.txt --out cal.yaml --report cal.html",
    ),
    "audit": ("aifabric audit config_db.json", "aifabric audit configs/ --topology ring:4 --format sarif"),
    "roce-config": (
        "aifabric roce-config --os sonic --speed 400G --cable 40m",
        "aifabric roce-config --os host --interface eth2",
    ),
    "verify-build": (
        "aifabric verify-build build/ --ibnetdiscover ibnetdiscover.txt",
        "aifabric verify-build plan.json --lldp lldp.json --mapping names.csv --json",
    ),
    "diagnose": (
        "aifabric diagnose --topology ibnetdiscover.txt --counters perfquery.txt",
        "aifabric diagnose --job all_reduce_perf.txt --calibration cal.yaml --json",
    ),
    "validate": ("aifabric validate scenarios/incast32.yaml", "aifabric validate --published"),
    "catalog": ("aifabric catalog --kind switch", "aifabric catalog --kind optic --json"),
    "sweep": (
        "aifabric sweep scenarios/studies/STUDY.yaml --out study/",
        "aifabric sweep STUDY.yaml --out study/ --workers 2 --no-report",
    ),
    "results": (
        "aifabric results study/",
        "aifabric results study/ --where advisor.gpus=1024 --table fabrics --csv rows.csv",
    ),
}


def epilog(name: str) -> str | None:
    """The examples under a command's help (rich markup: one line each)."""
    ex = EXAMPLES.get(name)
    if not ex:
        return None
    return "[bold]Examples[/bold]\n\n" + "\n\n".join(f"  {e}" for e in ex)


def _flags(info) -> list[str]:
    decls = [d for d in (getattr(info, "param_decls", None) or ()) if isinstance(d, str)]
    return [p for d in decls for p in d.split("/") if p.startswith("--")]


def group_options(name: str, callback) -> None:
    """Set each option's help panel (commands in :data:`PANELLED`: by meaning; the rest: output
    options in their own panel) and drop the ``<bool>`` type of on/off flags."""
    for param in inspect.signature(callback).parameters.values():
        info = param.default
        if not hasattr(info, "rich_help_panel") or not hasattr(info, "param_decls"):
            continue
        flags = _flags(info)
        if param.annotation in (bool, "bool") and getattr(info, "metavar", None) is None:
            info.metavar = ""
        panel = next((BY_FLAG[f] for f in flags if f in BY_FLAG), None)
        if name in PANELLED:
            info.rich_help_panel = info.rich_help_panel or panel
        elif panel == OUTPUT:
            info.rich_help_panel = info.rich_help_panel or OUTPUT


def apply(app) -> None:
    """Panels and examples for every registered command of ``app``."""
    for cmd in app.registered_commands:
        name = cmd.name or (cmd.callback.__name__ if cmd.callback else "")
        if cmd.epilog is None:
            cmd.epilog = epilog(name)
        if cmd.callback is not None:
            group_options(name, cmd.callback)
