"""``aifabric sweep STUDY.yaml --out DIR [--address RAY_ADDRESS] [--workers N]`` — a design-space
study: every point of the study file run (locally, or on Ray), results appended to DIR as they
finish, a study report at DIR/report.html. Starting it again on the same DIR resumes it."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from aifabric.cli._json import dumps


def invoke(argv: list[str]) -> tuple[int, str, str]:
    """Run ``aifabric ARGV`` in this process; return (exit code, stdout, stderr). Study points
    of CLI-run commands (simulate, train, collective) go through here, in the worker."""
    import contextlib
    import io

    import click

    from aifabric.cli import app

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = app(argv, standalone_mode=False)
        except click.exceptions.Exit as exc:
            rc = exc.exit_code
        except click.ClickException as exc:
            err.write(f"error: {exc.format_message()}\n")
            rc = exc.exit_code
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return (rc if isinstance(rc, int) else 0), out.getvalue(), err.getvalue()


def available_commands() -> set[str]:
    from aifabric.cli import app

    return {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}


def register(app: typer.Typer) -> None:
    @app.command("sweep")
    def sweep_cmd(
        study: Path = typer.Argument(..., help="Study YAML: base scenario, axes, command (interface.md)."),
        out: Path = typer.Option(..., "--out", help="Study folder: results database and report (resumable)."),
        address: str | None = typer.Option(
            None,
            "--address",
            help="Ray cluster (ray://HOST:10001, HOST:6379, auto, or local); default $RAY_ADDRESS, "
            "else a local process pool.",
        ),
        workers: int | None = typer.Option(
            None,
            "--workers",
            help="Local worker processes (default: CPUs, capped by memory); on Ray, tasks in flight.",
        ),
        retry_failed: bool = typer.Option(
            False, "--retry-failed", help="Run points that failed before again."
        ),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr."),
        report: bool = typer.Option(True, "--report/--no-report", help="Write DIR/report.html."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the run's counts)."),
    ) -> None:
        """Run a design-space study (grid, list or sample of points); resumable; results in DIR."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.cli._outpaths import check_out_folder
            from aifabric.sweep.commands import validator
            from aifabric.sweep.runner import run_study
            from aifabric.sweep.study import load_study

            check_out_folder(out, "--out")
            st = load_study(study, validate_point=validator(available_commands()))
            addr = address or os.environ.get("RAY_ADDRESS") or None
            res = run_study(
                st,
                out,
                invoke=invoke,
                address=addr,
                workers=workers,
                progress=progress,
                retry_failed=retry_failed,
                report=report,
            )
            line = (
                f"study {res.name}: {res.points} points, {res.skipped} already done, {res.ok} run ok, "
                f"{res.failed} failed; {res.wall_s:.1f} s ({res.where}); results in {res.out}"
                + (f", report {res.report}" if res.report else "")
            )
            if res.stopped:  # the unfinished points are not stored: the same command resumes
                line += (
                    f"; stopped early: {res.stopped}; {res.unfinished} points not run "
                    "(run the same command again to run them)"
                )
            if as_json:
                typer.echo(line, err=True)
                typer.echo(dumps(res.to_dict(), indent=2))
            else:
                typer.echo(line)
            return 1 if res.failed or res.stopped else 0

        run_guarded(body)
