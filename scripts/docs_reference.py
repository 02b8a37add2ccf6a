"""The reference pages of the documentation site, generated, never hand-copied:

* ``reference/scenario.md`` from the pydantic models of :mod:`aifabric.scenario` (and the
  ``training:`` section's :class:`aifabric.workload.llm.spec.TrainingSpec`): every key, its type
  and unit, its default, its allowed values and the comment the source gives it;
* ``reference/json.md`` from the interface contract ``docs/interface.md``, its sections grouped by
  the command they describe.

mkdocs builds them on every run (scripts/mkdocs_hooks.py); ``python scripts/docs_reference.py DIR``
writes them to DIR to read them without the site.
"""

from __future__ import annotations

import inspect
import re
import sys
import typing
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from aifabric import scenario as S  # noqa: E402
from aifabric.units import parse_rate, parse_size, parse_time  # noqa: E402
from aifabric.workload.llm.spec import TrainingSpec  # noqa: E402

SECTIONS = {"training": TrainingSpec}  # sections kept as mappings in Scenario, validated elsewhere
UNITS = {parse_size: "size (B, KB, MiB, …)", parse_rate: "rate (bps … Tbps)", parse_time: "time (ps … s)"}


# ---- scenario reference ---------------------------------------------------------------------
def _metadata(field) -> list:
    """The field's validators and constraints, also those inside ``Annotated[...] | None``."""
    out = list(field.metadata)
    for arg in typing.get_args(field.annotation):
        if typing.get_origin(arg) is typing.Annotated:
            for meta in arg.__metadata__:
                out += getattr(meta, "metadata", [meta])
    return out


def _unit_of(field) -> str | None:
    for meta in _metadata(field):
        cells = getattr(getattr(meta, "func", None), "__closure__", None) or ()
        for cell in cells:
            fn = cell.cell_contents
            if callable(fn) and fn in UNITS:
                return UNITS[fn]
    return None


def _bounds(field) -> str:
    out = []
    for meta in _metadata(field):
        for name, sym in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            v = getattr(meta, name, None)
            if v is not None and not (name == "le" and v >= 10**9):
                out.append(f"{sym} {v:,}" if isinstance(v, int) else f"{sym} {v}")
    return ", ".join(out)


def _type(annotation) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is typing.Annotated:
        return _type(args[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        parts = [_type(a) for a in args if a is not type(None)]
        return " or ".join(parts)
    if origin in (list, tuple, set):
        return f"list of {_type(args[0])}" if args else "list"
    if origin is dict:
        return "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return getattr(annotation, "__name__", str(annotation)).replace("NoneType", "null")


def _comments(model: type[BaseModel]) -> dict[str, str]:
    """Each field's comment in the source: the lines above it and the one after it."""
    try:
        lines, _ = inspect.getsourcelines(model)
    except (OSError, TypeError):
        return {}
    out, above = {}, []
    for raw in lines[1:]:
        s = raw.strip()
        if s.startswith("#"):
            above.append(s.lstrip("# ").strip())
            continue
        m = re.match(r"^\s{4}(\w+)\s*:", raw)
        if m and not s.startswith(("def ", "@")):
            tail = raw.split("  # ", 1)[1].strip() if "  # " in raw else ""
            out[m.group(1)] = " ".join([*above, tail]).strip()
        above = []
    return out


def _default(field) -> str:
    if field.is_required():
        return "required"
    v = field.get_default(call_default_factory=True)
    if isinstance(v, BaseModel):
        return "see below"
    if v is None:
        return "—"
    unit = _unit_of(field)
    if unit and isinstance(v, int) and not isinstance(v, bool):
        return f"`{_with_unit(v, unit)}`"
    return f"`{v}`"


def _with_unit(v: int, unit: str) -> str:
    if unit.startswith("rate"):
        return f"{v / 1e9:g}Gbps"
    if unit.startswith("time"):
        for scale, name in ((10**12, "s"), (10**9, "ms"), (10**6, "us"), (10**3, "ns")):
            if v >= scale:
                return f"{v / scale:g}{name}"
        return f"{v}ps"
    return f"{v}B"


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []

    def visit(m):
        if m in seen:
            return
        seen.append(m)
        for f in m.model_fields.values():
            for sub in _submodels(f.annotation):
                visit(sub)

    visit(root)
    for m in SECTIONS.values():
        visit(m)
    return seen


def _submodels(annotation) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _submodels(a)]


def _field_rows(model: type[BaseModel]) -> list[str]:
    comments = _comments(model)
    rows = ["| key | type | default | allowed | notes |", "|---|---|---|---|---|"]
    for name, f in model.model_fields.items():
        key = f.alias or name
        typ = _unit_of(f) or _type(f.annotation)
        if name in SECTIONS:
            typ = f"[{SECTIONS[name].__name__}](#{SECTIONS[name].__name__.lower()})"
        note = (f.description or comments.get(name, "")).replace("|", "\\|")
        rows.append(f"| `{key}` | {typ} | {_default(f)} | {_bounds(f)} | {note} |")
    return rows


def scenario_page() -> str:
    out = [
        "# Scenario file reference",
        "",
        "Generated from the pydantic models that read a scenario file (`src/aifabric/scenario.py`,",
        "and `src/aifabric/workload/llm/spec.py` for `training:`) each time the site is built.",
        "Unknown keys are errors; a size, rate or time takes its unit (`4000B`, `400Gbps`, `2us`).",
        "Defaults shown as integers are in base units (bytes, bit/s, picoseconds).",
        "",
    ]
    for model in _models(S.Scenario):
        doc = inspect.cleandoc(model.__doc__ or "").split("\n\n")[0].replace("\n", " ")
        out += [f"## {model.__name__}", "", doc, "", *_field_rows(model), ""]
    return "\n".join(out)


# ---- JSON / CLI reference from the interface contract ---------------------------------------
COMMANDS = (
    "compare", "train", "plan", "simulate", "risk", "collective", "calibrate", "audit",
    "roce-config", "verify-build", "diagnose", "validate", "catalog", "sweep", "results",
)  # fmt: skip
TICKET = re.compile(r"\s*\((?:issue|#)\s*\d+[^)]*\)|\bissue #?\d+[:,]?\s*", re.I)


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading, body lines) for every ##/###/#### heading outside fenced blocks."""
    out: list[tuple[str, list[str]]] = [("", [])]
    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{2,4} (.*)", line)
        if m:
            out.append((m.group(1), []))
        else:
            out[-1][1].append(line)
    return [(h, b) for h, b in out if h]


def _command_of(heading: str) -> str:
    for c in COMMANDS:
        if re.search(rf"(`aifabric {c}\b|`{c}\b|\b{c} --json)", heading):
            return c
    return "general"


def json_page() -> str:
    text = (ROOT / "docs" / "interface.md").read_text(encoding="utf-8")
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    groups: dict[str, list[str]] = {}
    for heading, body in _sections(text):
        if heading.startswith(("aifabric — the public interface", "Part ")):
            continue
        body = [TICKET.sub(" ", ln).rstrip() for ln in body]
        groups.setdefault(_command_of(heading), []).extend([f"### {TICKET.sub('', heading)}", *body, ""])
    out = [
        "# JSON output and CLI contract",
        "",
        "Generated from the interface contract (`docs/interface.md`) each time the site is built:",
        "its sections, grouped by the command they describe. Keys listed here are kept; new keys",
        "are added, never renamed or removed without the old spelling working.",
        "",
    ]
    for c in (*COMMANDS, "general"):
        if c in groups:
            out += [f"## {'aifabric ' + c if c != 'general' else 'All commands'}", "", *groups[c]]
    return "\n".join(out) + "\n"


PAGES = {"reference/scenario.md": scenario_page, "reference/json.md": json_page}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "site-reference"
    for name, fn in PAGES.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(fn(), encoding="utf-8")
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
