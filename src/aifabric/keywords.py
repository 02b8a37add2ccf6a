"""Keyword arguments of the Python API: strict types (a wrong type is an error naming the keyword,
never a silent conversion), errors renamed from scenario fields and CLI flags to the keywords, and
rates given as numbers (Gb/s) or strings with a unit (``"400G"``)."""

from __future__ import annotations

from typing import Any

from aifabric.errors import InputError, InputErrors

_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "True or False"}


def check_type(name: str, value: Any, kind: type, allowed: str | None = None) -> None:
    """``value`` of keyword ``name`` must be ``kind`` (None: not given). ``"64"`` for an integer is an
    error, not 64; an integer is a number; True is not an integer."""
    if value is None:
        return
    ok = isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))
    if kind is float:
        ok = ok or (isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise InputError(
            f"must be {_KINDS.get(kind, kind.__name__)}, not {type(value).__name__}",
            field=name,
            value=value,
            allowed=allowed,
        )


def keyword_field(field_name: str | None, asked: set[str]) -> str | None:
    """The keyword argument an error's field means: ``advisor.gpus`` → ``gpus``, ``--designs
    (advisor.designs)`` → ``designs``, ``training.model`` → ``model`` when ``model`` was asked."""
    if not field_name:
        return field_name
    f = field_name.split(" (")[0]
    f = f[2:].replace("-", "_") if f.startswith("--") else f
    head, _, rest = f.partition(".")
    if head == "advisor" and rest:
        return rest
    last = f.rsplit(".", 1)[-1]
    return last if last in asked else f


def renamed(exc: InputError, asked: set[str]) -> InputError:
    """``exc`` with its fields named as keyword arguments (the API's words, not the CLI's flags)."""

    def one(e: InputError) -> InputError:
        return InputError(
            e.problem, file=e.file, field=keyword_field(e.field, asked), value=e.value, allowed=e.allowed
        )

    if isinstance(exc, InputErrors):
        return InputErrors([one(e) for e in exc.errors])
    return one(exc)


def rate_gbps(name: str, value: Any) -> float | None:
    """A rate keyword: a number in Gb/s, or a string with a unit (``"400G"``, ``"400Gbps"``)."""
    from aifabric.units import UnitError, parse_rate

    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return None if value is None else float(value)
    try:
        return parse_rate(value) / 1e9
    except UnitError as exc:
        raise InputError("bad rate", field=name, value=value, allowed=exc.allowed) from None
