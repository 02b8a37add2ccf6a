"""Study files: a base scenario, axes over dotted scenario keys, and the points they span.

```yaml
name: size-vs-gpu
command: compare                 # compare | train | simulate | collective
base: {advisor: {gpus: 1024, gpu: h100, workload: training, model: llama3-70b}}
axes:                            # a grid: every combination (dotted scenario keys)
  advisor.gpus: [512, 1024, 2048]
  advisor.gpu: [h100, b200]
points:                          # or an explicit list (each one is crossed with the axes grid)
  - {advisor.gpus: 4096, advisor.budget: low}
sample:                          # or a seeded random / Latin-hypercube sample (crossed with axes)
  method: lhs                    # random | lhs
  n: 20
  seed: 1
  ranges:
    advisor.gpus: {min: 256, max: 8192, log: true, integer: true}
    advisor.gpu: {values: [h100, h200, b200]}
options: {congestion_share: 0.25}  # the command's own options (compare: compute_efficiency, congestion_share, catalog)
resources: {memory: 2GiB}        # per task; default from the command's memory estimate
retries: 2                       # re-runs of a point whose worker died
```
A ``seed`` axis (the scenario's top-level ``seed``) repeats each point with other seeds, which
gives confidence intervals. ``options.X`` may also be an axis key.

:func:`load_study` validates the whole file and every point it spans before anything runs; a
problem is one :class:`~aifabric.errors.InputError` naming the file, the field and what is
allowed. A point's identity (:attr:`Point.point_id`) is a hash of what it runs — command,
resolved scenario and options — so a resumed study recognises the points it has finished.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aifabric.errors import InputError, InputErrors

COMMAND_NAMES = ("compare", "train", "simulate", "collective")


class _M(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RangeSpec(_M):
    """One sampled dimension: a numeric range or a list of values to draw from."""

    min: float | None = None
    max: float | None = None
    log: bool = False
    integer: bool = False
    values: Annotated[list[Any], Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _shape(self):
        if self.values is not None:
            if self.min is not None or self.max is not None:
                raise ValueError("give either values or min/max, not both")
            return self
        if self.min is None or self.max is None:
            raise ValueError("needs min and max (or values)")
        if self.min > self.max:
            raise ValueError(f"min ({self.min:g}) must not exceed max ({self.max:g})")
        if self.log and self.min <= 0:
            raise ValueError("log ranges need min > 0")
        return self


class SampleSpec(_M):
    method: Literal["random", "lhs"] = "lhs"
    n: Annotated[int, Field(ge=1, le=1_000_000)]
    seed: Annotated[int, Field(ge=0)] = 1
    ranges: Annotated[dict[str, RangeSpec], Field(min_length=1)]


class ResourcesSpec(_M):
    memory: str | int | None = None  # per task, e.g. 2GiB; default: the command's estimate
    cpus: Annotated[float, Field(gt=0, le=256)] = 1.0


class StudySpec(_M):
    """The study file (validated)."""

    name: Annotated[str, Field(min_length=1, max_length=200)] = "study"
    description: str | None = None
    command: Literal["compare", "train", "simulate", "collective"]
    base: dict[str, Any] = {}
    base_file: str | None = None
    options: dict[str, Any] = {}
    axes: dict[str, Annotated[list[Any], Field(min_length=1)]] = {}
    points: Annotated[list[dict[str, Any]], Field(min_length=1)] | None = None
    sample: SampleSpec | None = None
    resources: ResourcesSpec = ResourcesSpec()
    retries: Annotated[int, Field(ge=0, le=10)] = 2

    @model_validator(mode="after")
    def _one_source(self):
        if self.points is not None and self.sample is not None:
            raise ValueError("give points or sample, not both (either one is crossed with axes)")
        return self


@dataclass(frozen=True)
class Point:
    """One point of a study: what it sets (dotted keys → values), and what it runs."""

    index: int
    assignments: dict[str, Any]  # dotted key → value (axes, points, sample), in study order
    scenario: dict[str, Any]  # base with the assignments applied (options.* excluded)
    options: dict[str, Any]
    point_id: str = field(default="")


@dataclass(frozen=True)
class Study:
    spec: StudySpec
    file: str
    points: tuple[Point, ...]
    keys: tuple[str, ...]  # every dotted key any point assigns, in study order
    base: dict = field(default_factory=dict)  # the base scenario (base_file merged, paths resolved)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def command(self) -> str:
        return self.spec.command

    def canonical(self) -> dict:
        """The study as data (base file inlined): equal studies have equal canonical forms."""
        d = self.spec.model_dump(mode="json", exclude={"base_file", "description", "resources", "retries"})
        d["base"] = self.base
        return d


def set_dotted(data: dict, key: str, value: Any) -> dict:
    """``data`` with ``key`` (``a.b.c``) set to ``value``; intermediate mappings are created."""
    out = copy.deepcopy(data)
    cur = out
    parts = key.split(".")
    for p in parts[:-1]:
        nxt = cur.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[p] = nxt
        cur = nxt
    cur[parts[-1]] = value
    return out


def point_id(command: str, scenario: dict, options: dict) -> str:
    """A stable id of what a point runs (16 hex digits of a SHA-256 of canonical JSON)."""
    blob = json.dumps(
        {"command": command, "scenario": scenario, "options": options}, sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _sample(spec: SampleSpec) -> list[dict[str, Any]]:
    """``n`` seeded points: independent uniform draws (random) or one per stratum of every
    dimension, strata shuffled independently (Latin hypercube)."""
    import numpy as np

    rng = np.random.default_rng(spec.seed)
    keys = list(spec.ranges)
    if spec.method == "random":
        u = rng.random((spec.n, len(keys)))
    else:
        u = np.empty((spec.n, len(keys)))
        for j in range(len(keys)):
            u[:, j] = (rng.permutation(spec.n) + rng.random(spec.n)) / spec.n
    out = []
    for i in range(spec.n):
        row = {}
        for j, k in enumerate(keys):
            r = spec.ranges[k]
            if r.values is not None:
                row[k] = r.values[min(int(u[i, j] * len(r.values)), len(r.values) - 1)]
                continue
            if r.log:
                v = math.exp(math.log(r.min) + u[i, j] * (math.log(r.max) - math.log(r.min)))
            else:
                v = r.min + u[i, j] * (r.max - r.min)
            row[k] = int(round(v)) if r.integer else float(v)
        out.append(row)
    return out


def _read_yaml(path: Path, what: str) -> Any:
    from aifabric import yamlsafe
    from aifabric.memory import read_text

    text = read_text(path, what, bytes_per_byte=100)
    try:
        return yamlsafe.load(text, str(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            f"YAML syntax error: {getattr(exc, 'problem', None) or 'invalid YAML'}",
            file=str(path),
            field=f"line {mark.line + 1}" if mark is not None else None,
        ) from None


def _where(key: str, spec: StudySpec, assignments: dict) -> str:
    """The study field a dotted scenario key came from (for error messages)."""
    if key in spec.axes:
        return f"axes.{key}"
    if spec.sample is not None and key in spec.sample.ranges:
        return f"sample.ranges.{key}"
    if spec.points is not None and key in assignments:
        return f"points[].{key}"
    return f"base.{key}"


def load_study(path: str | Path, validate_point=None) -> Study:
    """Read, validate and expand a study file.

    ``validate_point(command, scenario, options)`` (from :mod:`aifabric.sweep.commands`) checks
    one point's inputs and raises :class:`InputError` (its ``field`` a dotted scenario key);
    every point is checked before anything runs, and the first problem is reported against the
    study field it came from.
    """
    p = Path(path)
    data = _read_yaml(p, "study file")
    if not isinstance(data, dict):
        raise InputError(
            "a study must be a YAML mapping",
            file=str(p),
            field="(top level)",
            allowed="keys " + ", ".join(StudySpec.model_fields),
        )
    try:
        spec = StudySpec.model_validate(data)
    except ValidationError as exc:
        from aifabric.scenario import _errors_from_validation

        errs = _errors_from_validation(exc, str(p), StudySpec)
        for e in errs:
            if e.field == "command" and e.problem == "not an allowed value":
                e = InputError(
                    e.problem, file=e.file, field=e.field, value=e.value, allowed=", ".join(COMMAND_NAMES)
                )
            raise e from None
        raise InputError("invalid study", file=str(p)) from None
    base = copy.deepcopy(spec.base)
    if spec.base_file is not None:
        bp = Path(spec.base_file)
        bp = bp if bp.is_absolute() else p.parent / bp
        from_file = _read_yaml(bp, "base_file")
        if not isinstance(from_file, dict):
            raise InputError(
                "base_file must hold a YAML mapping", file=str(p), field="base_file", value=str(bp)
            )
        base = _deep_merge(from_file, base)
    base = _resolve_paths(base, p.parent)
    pre: list[dict[str, Any]]
    if spec.points is not None:
        pre = [dict(x) for x in spec.points]
    elif spec.sample is not None:
        pre = _sample(spec.sample)
    else:
        pre = [{}]
    for i, row in enumerate(pre):
        clash = sorted(set(row) & set(spec.axes))
        if clash:
            raise InputError(
                "a key may be set by points/sample or by axes, not both",
                file=str(p),
                field=f"points[{i}].{clash[0]}" if spec.points is not None else f"sample.ranges.{clash[0]}",
            )
        for k in row:
            _check_key(k, p, "points" if spec.points is not None else "sample.ranges")
    for k in spec.axes:
        _check_key(k, p, "axes")
    grid_keys = list(spec.axes)
    grid = [dict(zip(grid_keys, combo, strict=True)) for combo in itertools.product(*spec.axes.values())]
    points: list[Point] = []
    seen: dict[str, int] = {}
    keys: list[str] = []
    for row in pre:
        for g in grid:
            assign = {**row, **g}
            for k in assign:
                if k not in keys:
                    keys.append(k)
            scen, opts = base, dict(spec.options)
            for k, v in assign.items():
                if k.startswith("options."):
                    opts[k[len("options.") :]] = v
                else:
                    scen = set_dotted(scen, k, v)
            if validate_point is not None:
                try:
                    validate_point(spec.command, scen, opts)
                except InputError as exc:
                    raise _point_error(exc, p, spec, assign, len(points)) from None
            pid = point_id(spec.command, scen, opts)
            if pid in seen:
                raise InputError(
                    f"points {seen[pid]} and {len(points)} are the same point ({_label(assign)})",
                    file=str(p),
                    field="points" if spec.points is not None else "axes",
                    allowed="distinct values on every axis",
                )
            seen[pid] = len(points)
            points.append(Point(len(points), assign, scen, opts, pid))
    return Study(spec, str(p), tuple(points), tuple(keys), base)


def _label(assign: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in assign.items()) or "(base)"


def _check_key(key: str, path: Path, where: str) -> None:
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise InputError(
            "not a dotted scenario key", file=str(path), field=f"{where}.{key}", allowed="e.g. advisor.gpus"
        )


def _point_error(exc: InputError, path: Path, spec: StudySpec, assign: dict, index: int) -> InputError:
    errs = exc.errors if isinstance(exc, InputErrors) and exc.errors else [exc]
    e = errs[0]
    fld = e.field or "(point)"
    # the dotted key this field lives under, if a point set it
    owner = next((k for k in assign if fld == k or fld.startswith(k + ".")), None)
    if owner is not None:
        where = _where(owner, spec, assign) + fld[len(owner) :]
        problem = f"{e.problem} (point {index}: {_label(assign)})"
        return InputError(problem, file=str(path), field=where, value=e.value, allowed=e.allowed)
    if fld in ("(point)", "(top level)"):
        return InputError(e.problem, file=str(path), field="base", value=e.value, allowed=e.allowed)
    where = fld if fld.startswith("options") else f"base.{fld}"
    return InputError(e.problem, file=str(path), field=where, value=e.value, allowed=e.allowed)


def _deep_merge(a: dict, b: dict) -> dict:
    out = copy.deepcopy(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _resolve_paths(data: dict, folder: Path) -> dict:
    """Relative ``topology.path`` / ``workload.path`` / ``workload.cdf`` files are relative to
    the study file, as they are to a scenario file."""
    out = copy.deepcopy(data)
    for section, keys in (("topology", ("path",)), ("workload", ("path",))):
        sec = out.get(section)
        if isinstance(sec, dict):
            for k in keys:
                v = sec.get(k)
                if isinstance(v, str) and not Path(v).is_absolute():
                    sec[k] = str((folder / v).resolve())
    return out


def memory_bytes(text: str | int) -> int:
    """A size (``2GiB``) in bytes, for ``resources.memory``."""
    from aifabric.units import UnitError, parse_size

    try:
        v = parse_size(text)
    except UnitError as exc:
        raise InputError("bad size", field="resources.memory", value=text, allowed=exc.allowed) from None
    if v <= 0:
        raise InputError("must be > 0", field="resources.memory", value=text, allowed="e.g. 2GiB")
    return v
