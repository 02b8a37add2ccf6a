"""What a study point runs: one table, :data:`COMMANDS`, from the command name to how its inputs are
checked, how it runs, which rows it stores and how much memory a task asks for.

``compare`` runs through the Python API (:func:`aifabric.api.compare_advisor`, the path
``aifabric compare --json`` takes, with the scenario's ``seed``). ``simulate``, ``train`` and
``collective`` run as their command does — ``aifabric NAME ... --json`` inside the worker, through
an ``invoke(argv) -> (exit code, stdout, stderr)`` function the CLI layer hands in — so a study
stores exactly what the command prints, and a command added to the CLI (``train``) works here as
soon as it is registered. Each point's outcome is a plain dict (:func:`execute`), so it crosses
process and Ray boundaries unchanged.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from aifabric.errors import InputError, InputErrors

Invoke = Callable[[list[str]], tuple[int, str, str]]
MiB = 2**20


@dataclass(frozen=True)
class Command:
    name: str
    via_cli: bool  # runs as `aifabric NAME ... --json` through the CLI layer's invoke
    options: dict[str, str]  # study `options:` this command takes → what is allowed
    validate: Callable[[dict, dict], None]  # (scenario, options) → raises InputError(s)
    run: Callable[[dict, dict, Invoke | None], dict]  # → the command's --json object
    summarize: Callable[[dict], tuple[dict, dict[str, list[dict]]]]  # → summary, {table: rows}
    memory: Callable[[dict, dict], int]  # (scenario, options) → bytes a task asks for
    tables: tuple[str, ...]  # detail tables besides `points`
    heat_metric: str  # the summary column a study report's heat maps show


# ---- helpers ---------------------------------------------------------------------------------
def _scalar(v):
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return json.dumps(v, sort_keys=True, default=str)


def flatten(d: dict, prefix: str = "", depth: int = 1) -> dict:
    """Scalar fields of ``d`` (and of nested mappings, ``depth`` levels down, as ``a_b``); lists
    and deeper mappings are left out."""
    out = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            if depth > 0:
                out.update(flatten(v, f"{name}_", depth - 1))
        elif not isinstance(v, list):
            out[name] = _scalar(v)
    return out


def _scenario(scenario: dict):
    from aifabric.scenario import scenario_from_dict

    return scenario_from_dict(scenario)


def _check_options(cmd: str, options: dict, allowed: dict[str, str]) -> None:
    for k in options:
        if k not in allowed:
            raise InputError(
                f"not an option of {cmd}",
                field=f"options.{k}",
                allowed=", ".join(allowed) or "none (this command takes no options)",
            )


def _write_scenario(scenario: dict) -> str:
    import yaml

    fd, path = tempfile.mkstemp(prefix="aifabric-point-", suffix=".yaml")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        yaml.safe_dump(scenario, fh, sort_keys=False)
    return path


def _cli_json(invoke: Invoke | None, argv: list[str], ok_codes=(0,)) -> dict:
    if invoke is None:
        raise RuntimeError(f"aifabric {argv[0]} runs through the CLI; no invoke function was given")
    code, out, err = invoke(argv)
    lines = [x for x in err.splitlines() if x.strip()]
    if code == 2:
        raise InputError(lines[-1].removeprefix("error: ") if lines else f"aifabric {argv[0]}: bad input")
    if code not in ok_codes:
        raise RuntimeError(lines[-1] if lines else f"aifabric {argv[0]} exited {code}")
    try:
        return json.loads(out)
    except ValueError:
        raise RuntimeError(f"aifabric {argv[0]} --json printed no JSON object (exit {code})") from None


def _by_tech(fabrics: list[dict], key: Callable[[dict], Any], name: str) -> dict:
    """``ib_NAME`` / ``roce_NAME`` from the first fabric of each technology."""
    out = {}
    for f in fabrics:
        t = {"infiniband": "ib", "roce": "roce"}.get(f.get("technology"), f.get("technology"))
        col = f"{t}_{name}"
        if t and col not in out:
            try:
                out[col] = key(f)
            except (KeyError, TypeError):
                out[col] = None
    return out


# ---- compare (Python API) --------------------------------------------------------------------
COMPARE_OPTIONS = {
    "compute_efficiency": "a number in (0, 1] (a measured GEMM efficiency)",
    "congestion_share": "a number in [0, 1]",
    "catalog": "a YAML file",
}


def _compare_validate(scenario: dict, options: dict) -> None:
    _check_options("compare", options, COMPARE_OPTIONS)
    sc = _scenario(scenario)
    adv = sc.advisor
    if adv is not None and adv.model and adv.workload == "trading":
        raise InputError(
            "model applies to workload training, inference or storage", field="advisor.model", value=adv.model
        )
    ce = options.get("compute_efficiency")
    if ce is not None and (not isinstance(ce, int | float) or isinstance(ce, bool) or not 0 < ce <= 1):
        raise InputError(
            "must be in (0, 1]", field="options.compute_efficiency", value=ce, allowed="e.g. 0.6"
        )
    share = options.get("congestion_share")
    if share is not None and (
        not isinstance(share, int | float) or isinstance(share, bool) or not 0 <= share <= 1
    ):
        raise InputError("must be in [0, 1]", field="options.congestion_share", value=share)
    cat = options.get("catalog")
    if cat is not None and not os.path.isfile(str(cat)):
        raise InputError("file not found", field="options.catalog", value=cat)


def _compare_run(scenario: dict, options: dict, invoke: Invoke | None) -> dict:
    from aifabric.api import compare_advisor
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import AdvisorSpec

    sc = _scenario(scenario)
    adv = sc.advisor or AdvisorSpec()
    res = compare_advisor(
        adv,
        load_catalog(options.get("catalog")),
        seed=sc.seed,
        compute_efficiency=options.get("compute_efficiency"),
        congestion_share=options.get("congestion_share"),
        training=sc.training,
        inference=sc.inference.model_dump(exclude_none=True) if sc.inference is not None else None,
        storage=sc.storage.model_dump(exclude_none=True) if sc.storage is not None else None,
        assumptions=sc.assumptions,
    )
    res["scenario"] = sc.name
    res["fabrics"] = [
        {k: v for k, v in f.items() if k not in ("fct_us", "permutation_fct_us")} for f in res["fabrics"]
    ]
    return res


def _fabric_row(f: dict) -> dict:
    row = flatten({k: v for k, v in f.items() if k not in ("plan", "iteration", "training_cost")}, depth=0)
    plan = f.get("plan") or {}
    for k in ("nic_rate_gbps", "planes", "tiers", "switch", "nic", "switch_count", "oversubscription"):
        if k in plan:
            row[k] = _scalar(plan[k])
    row["network_capex_per_gpu_usd"] = plan.get("network_capex_per_gpu_usd")
    it = f.get("iteration") or {}
    row.update(flatten({k: v for k, v in it.items() if k != "collectives"}, "iteration_", depth=1))
    row.update(flatten(f.get("training_cost") or {}, "", depth=0))
    return row


def _compare_summarize(res: dict) -> tuple[dict, dict[str, list[dict]]]:
    rec = res.get("recommendation") or {}
    fabrics = res.get("fabrics") or []
    s = {
        "recommendation": rec.get("fabric"),
        "design": rec.get("design"),
        "verdict": rec.get("verdict"),
        "recommended_nic_rate_gbps": rec.get("nic_rate_gbps"),
    }
    for name, key in (
        ("capex_usd", lambda f: f["capex_usd"]),
        ("iteration_time_s", lambda f: f["iteration_time_s"]),
        ("tokens_per_s", lambda f: f["tokens_per_s"]),
        ("busbw_gbytes_per_s", lambda f: f.get("busbw_gbytes_per_s")),
        ("busbw_gbps", lambda f: f["busbw_gbps"]),  # deprecated alias (Gb/s), one release
        ("expected_loss", lambda f: f["expected_loss"]),
        ("cost_per_million_tokens_usd", lambda f: f["training_cost"]["cost_per_million_tokens_usd"]),
    ):
        s.update(_by_tech(fabrics, key, name))
    ib, roce = s.get("ib_cost_per_million_tokens_usd"), s.get("roce_cost_per_million_tokens_usd")
    s["roce_over_ib_cost_per_token"] = roce / ib if ib and roce is not None else None
    objective = _objectives(res)
    s.update(_best_objective(res))
    s["objective_name"] = rec.get("objective")
    rows = [{**_fabric_row(f), "objective": objective.get(f.get("design"))} for f in fabrics]
    return s, {"fabrics": rows}


def _decided(res: dict) -> list[dict]:
    """The decision stage's evidence per design (``evidence.decide.fabrics``)."""
    return list((((res.get("evidence") or {}).get("decide") or {}).get("fabrics") or {}).values())


def _objectives(res: dict) -> dict:
    """Design → the decision's objective (the risk-adjusted cost per useful unit it ranks designs by)."""
    return {d.get("design"): d.get("objective") for d in _decided(res)}


def _best_objective(res: dict) -> dict:
    """``ib_objective`` / ``roce_objective``: the lowest objective of each technology's feasible
    designs, and ``roce_over_ib_objective``, their ratio (below 1: RoCE is cheaper per useful work)."""
    out = {}
    for tech, pre in (("infiniband", "ib"), ("roce", "roce")):
        vals = [
            d["objective"]
            for d in _decided(res)
            if d.get("technology") == tech and d.get("feasible", True) and d.get("objective") is not None
        ]
        out[f"{pre}_objective"] = min(vals) if vals else None
    ib, roce = out["ib_objective"], out["roce_objective"]
    out["roce_over_ib_objective"] = roce / ib if ib and roce is not None else None
    return out


def _compare_memory(scenario: dict, options: dict) -> int:
    gpus = ((scenario.get("advisor") or {}).get("gpus")) or 1024
    # measured: 250 MB at 64 and 4,096 GPUs, 560 MB at 16,384 (peak RSS of `aifabric compare`)
    return int(512 * MiB + 32 * 1024 * int(gpus))


# ---- train (CLI) -----------------------------------------------------------------------------
TRAIN_OPTIONS = {"fabric": "ib, roce, both", "calibration": "a calibration YAML file"}


def _train_validate(scenario: dict, options: dict) -> None:
    _check_options("train", options, TRAIN_OPTIONS)
    if options.get("fabric", "both") not in ("ib", "roce", "both"):
        raise InputError(
            "not an allowed value", field="options.fabric", value=options["fabric"], allowed="ib, roce, both"
        )
    from aifabric.scenario import Scenario

    if "training" in scenario and "training" not in Scenario.model_fields:
        # a build whose scenario model does not hold `training:`: the train command reads that
        # section itself (a bad one is a failed point, with the command's one-line error)
        if not isinstance(scenario["training"], dict | str):
            raise InputError("must be a mapping", field="training", allowed="model, precision, seq_len, ...")
        scenario = {k: v for k, v in scenario.items() if k != "training"}
    _scenario(scenario)


def _train_run(scenario: dict, options: dict, invoke: Invoke | None) -> dict:
    path = _write_scenario(scenario)
    try:
        argv = ["train", path, "--json"]
        if "fabric" in options:
            argv += ["--fabric", str(options["fabric"])]
        if "calibration" in options:
            argv += ["--calibration", str(options["calibration"])]
        return _cli_json(invoke, argv)
    finally:
        os.unlink(path)


def _train_summarize(res: dict) -> tuple[dict, dict[str, list[dict]]]:
    fabrics = res.get("fabrics") or []
    s = {}
    s.update(_by_tech(fabrics, lambda f: f["iteration"]["iteration_s"], "iteration_s"))
    s.update(_by_tech(fabrics, lambda f: f["iteration"]["mfu"], "mfu"))
    s.update(_by_tech(fabrics, lambda f: f.get("capex_usd"), "capex_usd"))
    if fabrics and isinstance(fabrics[0].get("iteration"), dict):
        it = fabrics[0]["iteration"]
        s["iteration_s"] = it.get("iteration_s")
        s["mfu"] = it.get("mfu")
        s.update(flatten(it.get("layout") or {}, "layout_", depth=0))
    rows = []
    for f in fabrics:
        row = flatten({k: v for k, v in f.items() if k not in ("iteration", "plan")}, depth=0)
        it = f.get("iteration") or {}
        row.update(flatten({k: v for k, v in it.items() if k != "collectives"}, "iteration_", depth=1))
        rows.append(row)
    return s, {"fabrics": rows}


# ---- simulate (CLI) --------------------------------------------------------------------------
SIMULATE_OPTIONS = {"mode": "packet, flow"}


def _simulate_validate(scenario: dict, options: dict) -> None:
    _check_options("simulate", options, SIMULATE_OPTIONS)
    if options.get("mode", "packet") not in ("packet", "flow"):
        raise InputError(
            "not an allowed value", field="options.mode", value=options["mode"], allowed="packet, flow"
        )
    sc = _scenario(scenario)
    if sc.topology is None or sc.workload is None:
        raise InputError(
            "simulate needs a topology and a workload",
            field="topology" if sc.topology is None else "workload",
            allowed="see interface.md, scenario file",
        )


def _simulate_run(scenario: dict, options: dict, invoke: Invoke | None) -> dict:
    path = _write_scenario(scenario)
    try:
        argv = ["simulate", path, "--json", "--no-progress"]
        if "mode" in options:
            argv += ["--mode", str(options["mode"])]
        res = _cli_json(invoke, argv, ok_codes=(0, 1))  # 1: ran, found a deadlock
    finally:
        os.unlink(path)
    res.pop("flows", None)
    return res


def _simulate_summarize(res: dict) -> tuple[dict, dict[str, list[dict]]]:
    s = flatten(res.get("summary") or {}, depth=0)
    s.update(flatten(res.get("engine") or {}, "engine_", depth=0))
    return s, {}


# ---- collective (CLI, flags) -----------------------------------------------------------------
class CollectiveSpec(BaseModel):
    """A collective point's inputs: ``aifabric collective``'s argument and flags."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    op: Literal["all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast"]
    gpus: Annotated[int, Field(ge=1)] = 16
    gpu: Literal["h100", "h200", "b200"] = "h100"
    technology: Literal["ib", "roce"] = "ib"
    nic_rate: str = "400Gbps"
    algorithm: Literal["ring", "tree", "nvls", "nvls-tree", "auto"] = "ring"
    engine: Literal["flow", "analytic"] = "flow"
    routing: Literal["ecmp", "flowlet", "adaptive-packet", "static", "scheduled", "adaptive"] | None = None
    sharp: bool = False
    min_bytes: str | int = "8B"
    max_bytes: str | int = "8GiB"

    @field_validator("nic_rate")
    @classmethod
    def _rate(cls, v):
        from aifabric.units import UnitError, parse_rate

        try:
            parse_rate(v)
        except UnitError as exc:
            raise ValueError(f"cannot read {exc.value!r}; allowed: {exc.allowed}") from None
        return v

    @field_validator("min_bytes", "max_bytes")
    @classmethod
    def _size(cls, v):
        from aifabric.units import UnitError, parse_size

        try:
            if parse_size(v) <= 0:
                raise ValueError("must be > 0; allowed: e.g. 1MiB")
        except UnitError as exc:
            raise ValueError(f"cannot read {exc.value!r}; allowed: {exc.allowed}") from None
        return v


def _collective_spec(scenario: dict) -> CollectiveSpec:
    from aifabric.scenario import _errors_from_validation

    try:
        return CollectiveSpec.model_validate(scenario)
    except ValidationError as exc:
        raise InputErrors(_errors_from_validation(exc, None, CollectiveSpec)) from None


def _collective_validate(scenario: dict, options: dict) -> None:
    _check_options("collective", options, {})
    _collective_spec(scenario)


def _collective_run(scenario: dict, options: dict, invoke: Invoke | None) -> dict:
    c = _collective_spec(scenario)
    argv = ["collective", c.op, "--json"]
    for k in (
        "gpus",
        "gpu",
        "technology",
        "nic_rate",
        "algorithm",
        "engine",
        "routing",
        "min_bytes",
        "max_bytes",
    ):
        v = getattr(c, k)
        if v is not None:
            argv += [f"--{k.replace('_', '-')}", str(v)]
    if c.sharp:
        argv.append("--sharp")
    return _cli_json(invoke, argv)


def _collective_summarize(res: dict) -> tuple[dict, dict[str, list[dict]]]:
    rows = [flatten(r, depth=0) for r in res.get("rows") or []]
    s = {k: _scalar(res.get(k)) for k in ("technology", "switch", "engine", "algorithm")}
    if rows:
        last = max(rows, key=lambda r: r.get("size_bytes") or 0)
        s["max_size_bytes"] = last.get("size_bytes")
        s["busbw_gbytes_per_s"] = last.get("busbw_gbps")  # collective's busbw is GB/s
        s["busbw_gbps"] = last.get("busbw_gbps")  # deprecated alias (GB/s), one release
        s["time_us"] = last.get("time_us")
        s["peak_busbw_gbytes_per_s"] = max((r.get("busbw_gbps") or 0.0) for r in rows)
        s["peak_busbw_gbps"] = s["peak_busbw_gbytes_per_s"]
    return s, {"sizes": rows}


COMMANDS: dict[str, Command] = {
    "compare": Command(
        "compare", False, COMPARE_OPTIONS, _compare_validate, _compare_run, _compare_summarize,
        _compare_memory, ("fabrics",), "roce_over_ib_objective",
    ),
    "train": Command(
        "train", True, TRAIN_OPTIONS, _train_validate, _train_run, _train_summarize,
        lambda s, o: 1024 * MiB, ("fabrics",), "iteration_s",
    ),
    "simulate": Command(
        "simulate", True, SIMULATE_OPTIONS, _simulate_validate, _simulate_run, _simulate_summarize,
        lambda s, o: 2048 * MiB, (), "fct_p99_us",
    ),
    "collective": Command(
        "collective", True, {}, _collective_validate, _collective_run, _collective_summarize,
        lambda s, o: 1024 * MiB, ("sizes",), "busbw_gbytes_per_s",
    ),
}  # fmt: skip


def validator(available: set[str] | None = None) -> Callable[[str, dict, dict], None]:
    """``validate_point(command, scenario, options)`` for :func:`aifabric.sweep.study.load_study`;
    ``available`` is the set of commands the CLI has (a CLI-run command that is missing, such
    as ``train`` in a build without it, is reported up front)."""

    def check(command: str, scenario: dict, options: dict) -> None:
        cmd = COMMANDS[command]
        if cmd.via_cli and available is not None and command not in available:
            have = ", ".join(c for c in COMMANDS if not COMMANDS[c].via_cli or c in available)
            raise InputError(
                f"aifabric {command} is not available in this installation",
                field="command",
                value=command,
                allowed=have,
            )
        cmd.validate(scenario, options)

    return check


def execute(task: dict, invoke: Invoke | None = None) -> dict:
    """Run one point (``task``: command, scenario, options, point_id) and return its outcome:
    ``{"status": "ok"|"failed", "error", "summary", "tables", "wall_s", "worker"}``. A point
    whose inputs the command rejects, or that raises, is *failed* with a one-line error; the
    worker itself survives."""
    t0 = time.perf_counter()
    cmd = COMMANDS[task["command"]]
    out: dict[str, Any] = {"status": "ok", "error": None, "summary": {}, "tables": {}}
    try:
        res = cmd.run(task["scenario"], task["options"], invoke)
        out["summary"], out["tables"] = cmd.summarize(res)
    except InputError as exc:
        out.update(status="failed", error=str(exc).splitlines()[0] if str(exc) else "bad input")
    except Exception as exc:  # a failed point is a result; the study goes on
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
        out.update(status="failed", error=f"{type(exc).__name__}: {exc}{where}".splitlines()[0])
    out["wall_s"] = time.perf_counter() - t0
    out["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return out
