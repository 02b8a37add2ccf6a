"""The ``aifabric`` command line (typer + rich). Thin: parse, call the library, print.

Each command lives in its own module with a ``register(app)`` function; :data:`COMMAND_MODULES`
lists them in help order. Every command runs inside :func:`run_guarded`, which turns an
:class:`~aifabric.errors.InputError` into one line per problem on stderr and exit code 2 — never a
traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

import typer

from aifabric import __version__
from aifabric.errors import InputError, InputErrors

COMMAND_MODULES = [
    "compare",
    "plan",
    "simulate",
    "risk",
    "collective",
    "calibrate",
    "audit",
    "validate",
    "catalog",
]

app = typer.Typer(
    name="aifabric",
    help="InfiniBand or RoCEv2? Design, price, simulate and audit GPU-cluster fabrics.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"aifabric {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """InfiniBand or RoCEv2? Evidence computed for your cluster."""


def fail(lines: list[str] | str, code: int = 2) -> None:
    """Print problem lines on stderr and exit with ``code``."""
    for line in [lines] if isinstance(lines, str) else lines:
        typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


def run_guarded(fn: Callable[[], int | None]) -> None:
    """Run a command body; bad input → one line per problem on stderr, exit 2."""
    try:
        code = fn()
    except InputErrors as exc:
        fail(exc.lines())
    except InputError as exc:
        fail(str(exc))
    if code:
        raise typer.Exit(code)


def parse_unit_flag(kind: str, text: str, flag: str, example: str, positive: bool = False) -> float:
    """A unit flag (``kind`` rate | size | time) in base units (bit/s, bytes, ps), or a one-line
    InputError naming ``flag``; ``positive`` also rejects values ≤ 0."""
    from aifabric.units import UnitError, parse_rate, parse_size, parse_time

    fn = {"rate": parse_rate, "size": parse_size, "time": parse_time}[kind]
    try:
        v = fn(text)
    except UnitError as exc:
        raise InputError(f"bad {kind}", field=flag, value=text, allowed=exc.allowed or example) from None
    if positive and v <= 0:
        raise InputError("must be > 0", field=flag, value=text, allowed=example)
    return v


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"aifabric.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"aifabric.cli.{name}":
                continue  # command not built in this checkout
            raise
        mod.register(app)


_load_commands()


def main() -> None:
    """Console-script entry point.

    Garbage collection is tuned for a short-lived process that imports a lot (typer, pydantic,
    numba's type registries: ~10^6 long-lived objects): a first-generation threshold of 50,000
    instead of 700 spares some 250 collections during the imports, and freezing every object on
    the way out keeps the interpreter's final collections from walking them all again (~0.2 s
    after a packet simulation). Output, exit codes and atexit handlers are unaffected.
    """
    import gc

    gc.set_threshold(50_000)
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
    finally:
        gc.freeze()
