"""The what-if engine behind ``aifabric serve``: one scenario, its measured stages kept in memory per
job, and each what-if weighed again.

A what-if is the scenario's advisor questions with some changed (the page's job and question
controls) plus an ``assumptions:`` mapping (the register's controls). The first four stages (design →
workload → measure → performance, :func:`aifabric.stages.pipeline.run_performance`) depend only on the
job and design questions; they are computed once per job (:func:`front_key`) and kept, and every
what-if on that job re-enters the pipeline after *measure* (:func:`aifabric.stages.pipeline.finish`:
risk → decide → the verdict across the categorical assumptions). The numbers are those of ``aifabric
compare`` on the exported scenario (:meth:`Workspace.scenario_yaml`), which a test checks.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aifabric.errors import InputError, InputErrors

# advisor questions that only the risk and decide stages read: changing one re-weighs, never re-measures
WEIGH_FIELDS = (
    "team_expertise",
    "jitter_sensitivity",
    "budget",
    "growth",
    "network_budget_usd",
    "p99_budget",
    "tuning",
    "storage_placement",
)
# the advisor questions the page has controls for (the job first)
JOB_FIELDS = ("gpus", "gpu", "workload", "model", "host_link_media")
QUESTION_FIELDS = ("team_expertise", "jitter_sensitivity", "budget", "growth", "network_budget_usd")
FRONTS_KEPT = 4  # jobs whose measured stages stay in memory (each a few tens of MB)


class FieldErrors(InputError):
    """Bad values of a what-if: ``errors`` is a list of (control name, one-line message)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{c}: {m}" for c, m in errors))


@dataclass(frozen=True)
class Base:
    """The scenario the server was started with, read as ``aifabric compare`` reads it."""

    name: str
    path: str | None
    advisor: Any  # AdvisorSpec
    training: dict | None = None
    risk: Any = None  # RiskSpec
    inference: dict | None = None
    storage: dict | None = None
    assumptions: dict | None = None


def load_base(path: Path | None) -> Base:
    """The scenario file's advisor, sections and ``assumptions:`` (the built-in default without one);
    bad input raises :class:`InputError` naming the file and field."""
    from aifabric.scenario import AdvisorSpec, load_scenario
    from aifabric.stages.deployment import check_overrides

    if path is None:
        return Base("built-in default (1,024 H100, Llama-3 70B training)", None, AdvisorSpec())
    sc = load_scenario(path)
    sections = {
        s: getattr(sc, s).model_dump(exclude_none=True) if getattr(sc, s) is not None else None
        for s in ("inference", "storage")
    }
    return Base(
        sc.name,
        str(path),
        sc.advisor if sc.advisor is not None else AdvisorSpec(),
        sc.training,
        sc.risk,
        sections["inference"],
        sections["storage"],
        check_overrides(sc.assumptions, str(path)) if sc.assumptions else None,
    )


@dataclass(frozen=True)
class WhatIf:
    """One checked what-if: the advisor questions and the ``assumptions:`` overrides."""

    advisor: Any  # AdvisorSpec
    assumptions: dict


def _advisor_of(base: Base, asked: dict) -> Any:
    """``base``'s advisor with the page's values (None: the default); every bad value named."""
    from pydantic import ValidationError

    from aifabric.scenario import AdvisorSpec, validation_errors

    names = JOB_FIELDS + QUESTION_FIELDS
    allowed = ", ".join(names)
    errors = [
        (f"advisor.{k}", f"not a control of this page; allowed: {allowed}") for k in asked if k not in names
    ]
    merged = base.advisor.model_dump(exclude_unset=True)
    for k, v in asked.items():
        if v is None or v == "":
            merged.pop(k, None)
        elif k in names:
            merged[k] = v
    adv = None
    try:
        adv = AdvisorSpec(**merged)
    except ValidationError as exc:
        errs = validation_errors(exc, None, AdvisorSpec).errors
        errors += [(f"advisor.{(e.field or '').split('.')[0]}", _line(e)) for e in errs]
    if errors:
        raise FieldErrors(errors)
    if adv.model and adv.workload == "trading":
        raise FieldErrors([("advisor.model", "applies to workload training, inference or storage")])
    return adv


def _line(e: InputError) -> str:
    """The message of ``e`` without its file and field (the control shows where)."""
    text = e.problem + (f" (got {e.value!r})" if e.value is not None else "")
    return text + (f"; allowed: {e.allowed}" if e.allowed else "")


def _assumptions_of(asked: dict, file: str | None) -> dict:
    """Each override checked alone (:func:`aifabric.stages.deployment.check_overrides`), so every bad
    value gets its own message."""
    from aifabric.stages.deployment import check_overrides

    out, errors = {}, []
    for name, value in asked.items():
        if value is None or value == "":
            continue
        try:
            out.update(check_overrides({name: value}, file))
        except InputError as exc:
            errors.append((f"assumptions.{name}", _line(exc)))
    if errors:
        raise FieldErrors(errors)
    return out


def parse(base: Base, body: Any) -> WhatIf:
    """A what-if from the page's JSON ``{"advisor": {...}, "assumptions": {...}}``."""
    if not isinstance(body, dict) or set(body) - {"advisor", "assumptions"}:
        raise FieldErrors([("request", "expected a JSON object with 'advisor' and 'assumptions' mappings")])
    asked_adv, asked_ass = body.get("advisor") or {}, body.get("assumptions") or {}
    if not isinstance(asked_adv, dict) or not isinstance(asked_ass, dict):
        raise FieldErrors([("request", "'advisor' and 'assumptions' must be mappings")])
    errors: list[tuple[str, str]] = []
    adv = ass = None
    try:
        adv = _advisor_of(base, asked_adv)
    except FieldErrors as exc:
        errors += exc.errors
    try:
        ass = _assumptions_of(asked_ass, base.path)
    except FieldErrors as exc:
        errors += exc.errors
    if errors:
        raise FieldErrors(errors)
    return WhatIf(adv, ass)


def front_key(base: Base, w: WhatIf) -> str:
    """What the first four stages read of a what-if: the advisor without its weighing questions, and
    where storage runs when the job's storage traffic is part of the workload."""
    import json

    from aifabric.stages.deployment import resolve

    adv = {k: v for k, v in w.advisor.model_dump(mode="json").items() if k not in WEIGH_FIELDS}
    if w.advisor.workload == "storage" or base.storage:
        adv["storage_on_fabric"] = resolve(w.advisor, w.assumptions, base.storage).storage_on_fabric
    return json.dumps(adv, sort_keys=True)


class Workspace:
    """The scenario, the catalog and the measured stages of the jobs asked so far (a few kept)."""

    def __init__(self, base: Base, catalog, studies: dict[str, Path] | None = None) -> None:
        self.base, self.catalog = base, catalog
        self.studies = dict(studies or {})
        self._fronts: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def inputs(self, w: WhatIf):
        from aifabric.stages.pipeline import CompareInputs

        b = self.base
        return CompareInputs(
            w.advisor,
            self.catalog,
            training=b.training,
            scenario_file=b.path,
            risk=b.risk,
            inference=b.inference,
            storage=b.storage,
            assumptions=w.assumptions,
        )

    def measured(self, w: WhatIf) -> bool:
        """Whether this what-if's job is measured already (only risk → decide run again)."""
        with self._lock:
            return front_key(self.base, w) in self._fronts

    def compute(self, w: WhatIf, progress=None) -> tuple[Any, dict]:
        """The comparison for ``w`` and how it was reached (``stages`` run, ``wall_s``)."""
        from aifabric.stages.pipeline import finish, run_performance

        t0 = time.perf_counter()
        key, inputs = front_key(self.base, w), self.inputs(w)
        with self._lock:
            front = self._fronts.get(key)
        stages = ["risk", "decide"]
        if front is None:
            front = run_performance(inputs, progress)
            stages = ["design", "workload", "measure", "performance", *stages]
            with self._lock:
                self._fronts[key] = front
                while len(self._fronts) > FRONTS_KEPT:
                    self._fronts.popitem(last=False)
        else:
            with self._lock:
                self._fronts.move_to_end(key)
        c = finish(inputs, front, progress)
        wall = time.perf_counter() - t0
        return replace(c, wall_s=wall), {"stages": stages, "wall_s": wall}

    def scenario(self, w: WhatIf) -> dict:
        """The what-if as a scenario mapping ``aifabric compare`` reads back to the same numbers."""
        b = self.base
        out: dict[str, Any] = {"name": f"{b.name} (what-if)"}
        out["advisor"] = w.advisor.model_dump(mode="json", exclude_defaults=True)
        for key, value in (("training", b.training), ("inference", b.inference), ("storage", b.storage)):
            if value:
                out[key] = value
        if b.risk is not None:
            out["risk"] = b.risk.model_dump(mode="json", exclude_defaults=True)
        if w.assumptions:
            out["assumptions"] = dict(w.assumptions)
        return out

    def scenario_yaml(self, w: WhatIf) -> str:
        import yaml

        head = (
            f"# A what-if exported by aifabric serve from {self.base.path or 'the built-in default'}:\n"
            "# `aifabric compare THIS_FILE` gives the page's numbers.\n"
        )
        return head + yaml.safe_dump(self.scenario(w), sort_keys=False, allow_unicode=True)


def headline(result: dict) -> dict:
    """The numbers a what-if shows — the recommendation, verdict and what it hinges on, P(cheapest),
    the sensitivity rows, each fabric's capex, step time, expected loss and risk-adjusted cost — from
    a ``compare`` result dict (the page's or ``compare --json``'s)."""
    from aifabric.report.result import json_safe

    rec = result["recommendation"]
    decide = (result.get("evidence") or {}).get("decide") or {}
    keys = ("input", "base", "break_even", "range", "flips", "design_then", "verdict_then")
    return json_safe(
        {
            "recommendation": {
                k: rec.get(k)
                for k in ("fabric", "design", "verdict", "summary", "hinges_on", "nic_rate_gbps")
            },
            "probability_best": result.get("probability_best"),
            "sensitivity": [{k: s.get(k) for k in keys} for s in result.get("sensitivity") or []],
            "fabrics": [
                {
                    k: f.get(k)
                    for k in ("design", "capex_usd", "iteration_time_s", "tokens_per_s", "expected_loss")
                }
                for f in result["fabrics"]
            ],
            "objective": {k: v.get("objective") for k, v in (decide.get("fabrics") or {}).items()},
            "deployment": result.get("deployment"),
        }
    )


def errors_of(exc: InputError) -> list[tuple[str, str]]:
    """(control, message) pairs of an input error raised while computing (the control its field
    names when there is one, else ``request``)."""
    if isinstance(exc, FieldErrors):
        return list(exc.errors)
    errs = exc.errors if isinstance(exc, InputErrors) and exc.errors else [exc]
    out = []
    for e in errs:
        field = (e.field or "").lstrip("-").replace("-", "_")
        name = field.split(".", 1)[1] if field.startswith(("advisor.", "assumptions.")) else field
        control = (
            f"advisor.{name}"
            if name in JOB_FIELDS + QUESTION_FIELDS
            else (f"assumptions.{name}" if field.startswith("assumptions.") else "request")
        )
        out.append((control, str(e) if control == "request" else _line(e)))
    return out


__all__ = [
    "JOB_FIELDS",
    "QUESTION_FIELDS",
    "WEIGH_FIELDS",
    "Base",
    "FieldErrors",
    "WhatIf",
    "Workspace",
    "errors_of",
    "front_key",
    "headline",
    "load_base",
    "parse",
]
