"""The ``aifabric`` command line (typer + rich). Thin: parse, call the library, print.

Each command lives in its own module with a ``register(app)`` function; :data:`COMMAND_MODULES`
lists them in help order. Every command runs inside :func:`run_guarded`, which turns an
:class:`~aifabric.errors.InputError` into one line per problem on stderr and exit code 2 — never a
traceback. Anything else that escapes a command (a bug) becomes one line on stderr with a hint to
report it, exit code 1; ``aifabric --debug COMMAND`` (or ``AIFABRIC_DEBUG=1``) prints the full
traceback instead.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

import typer

from aifabric import __version__
from aifabric.errors import InputError, InputErrors

COMMAND_MODULES = [
    "compare",
    "train",
    "plan",
    "simulate",
    "risk",
    "collective",
    "calibrate",
    "audit",
    "verify_build",
    "diagnose",
    "validate",
    "catalog",
    "sweep",
    "results",
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


_DEBUG = {"on": False}
MAX_PROBLEM_LINES = 50  # aifabric validate: problem lines printed before "and N more"
REPORT_HINT = (
    "this is a bug in aifabric; please report it with the command line (rerun with --debug for the traceback)"
)


def debug_enabled() -> bool:
    """``--debug`` on the command line or ``AIFABRIC_DEBUG`` set to a non-empty value other than 0."""
    return _DEBUG["on"] or os.environ.get("AIFABRIC_DEBUG", "") not in ("", "0")


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="On an internal error, print the full Python traceback (for a bug report)."
    ),
) -> None:
    """InfiniBand or RoCEv2? Evidence computed for your cluster."""
    _DEBUG["on"] = debug


def fail(lines: list[str] | str, code: int = 2) -> None:
    """Print problem lines on stderr and exit with ``code``."""
    for line in [lines] if isinstance(lines, str) else lines:
        typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


def run_guarded(fn: Callable[[], int | None], every_problem: bool = False) -> None:
    """Run a command body; bad input → its first problem as one line on stderr (every problem, one
    line each, with ``every_problem``: ``aifabric validate``), exit 2; any other exception (a bug)
    → :func:`internal_error`, exit 1."""
    try:
        code = fn()
    except InputErrors as exc:
        lines = exc.lines() or [str(exc)]
        if every_problem and len(lines) > MAX_PROBLEM_LINES:
            more = len(lines) - MAX_PROBLEM_LINES
            fail([*lines[:MAX_PROBLEM_LINES], f"(and {more:,} more problems not shown)"])
        if every_problem or len(lines) == 1:
            fail(lines)
        fail(f"{lines[0]} (and {len(lines) - 1} more: 'aifabric validate' lists every problem)")
    except InputError as exc:
        fail(str(exc))
    except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit, BrokenPipeError):
        raise
    except MemoryError as exc:  # the memory guard's estimate was too low: not a bug report
        if debug_enabled():
            import traceback

            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        typer.echo(
            "error: out of memory: the run needed more memory than is available; "
            "try a smaller topology or workload",
            err=True,
        )
        raise typer.Exit(1) from None
    except Exception as exc:  # noqa: BLE001 - the one top-level handler
        internal_error(exc)
    if code:
        raise typer.Exit(code)


def internal_error(exc: BaseException, hint: str = REPORT_HINT) -> None:
    """An unexpected exception: one line on stderr (the full traceback with ``--debug``), exit 1."""
    if debug_enabled():
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    text = " ".join(str(exc).split())[:300]
    typer.echo(f"error: internal error: {type(exc).__name__}: {text} — {hint}", err=True)
    raise typer.Exit(1)


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
    from aifabric.cli._help import apply

    apply(app)


_load_commands()


def _click_errors():
    """typer's (vendored) click exception classes: ``(ClickException, NoArgsIsHelpError or None)``."""
    try:
        from typer._click import exceptions as ce
    except ImportError:  # pragma: no cover - typer using the click package
        from click import exceptions as ce
    return ce.ClickException, getattr(ce, "NoArgsIsHelpError", None)


def run(argv: list[str] | None = None, prog_name: str = "aifabric") -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and return the exit code instead of
    exiting. A command-line mistake (unknown option, value of the wrong type, missing argument) is
    one ``error:`` line on stderr, exit 2, as a bad scenario is; an unexpected exception is one
    line with a hint to report it, exit 1 (``--debug``: the traceback)."""
    click_exc, no_args = _click_errors()
    try:
        code = app(args=argv, prog_name=prog_name, standalone_mode=False)
    except typer.Exit as exc:  # pragma: no cover - standalone_mode=False returns the code
        return int(exc.exit_code or 0)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        return 1
    except click_exc as exc:
        if no_args is not None and isinstance(exc, no_args):
            ctx = getattr(exc, "ctx", None)
            typer.echo(ctx.get_help() if ctx is not None else str(exc))
            return 2
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else prog_name
        msg = " ".join(exc.format_message().split())
        hint = f" (see '{where} --help')" if ctx is not None else ""
        typer.echo(f"error: {where}: {msg}{hint}", err=True)
        return int(getattr(exc, "exit_code", 2) or 2)
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except BrokenPipeError:  # stdout closed early (| head): stop quietly, as other tools do
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
            pass
        return 141
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # noqa: BLE001 - outside any command body (option parsing, start-up)
        try:
            internal_error(exc)
        except typer.Exit as e:
            return int(e.exit_code)
    return int(code or 0) if isinstance(code, int) else 0


def main() -> None:
    """Console-script entry point: :func:`run`, then exit with its code.

    Garbage collection is tuned for a short-lived process that imports a lot (typer, pydantic,
    numba's type registries: ~10^6 long-lived objects): a first-generation threshold of 50,000
    instead of 700 spares some 250 collections during the imports, and freezing every object on
    the way out keeps the interpreter's final collections from walking them all again (~0.2 s
    after a packet simulation). Output, exit codes and atexit handlers are unaffected.
    """
    import gc

    gc.set_threshold(50_000)
    try:
        code = run()
    finally:
        gc.freeze()
    sys.exit(code)
