"""``aifabric serve [SCENARIO] [--port N] [--host ADDR] [--open] [--study DIR]...`` — the decision as
a local web page with what-if controls (:mod:`aifabric.serve`)."""

from __future__ import annotations

from pathlib import Path

import typer

from aifabric.errors import InputError

LOCAL = ("127.0.0.1", "localhost", "::1")


def _check(port: int, host: str) -> None:
    if not 1 <= port <= 65535:
        raise InputError("not a TCP port", field="--port", value=port, allowed="1 to 65535")
    if not host.strip():
        raise InputError("empty address", field="--host", value=host, allowed="e.g. 127.0.0.1")


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_cmd(
        scenario: Path | None = typer.Argument(
            None, help="Scenario YAML with an advisor: section (optional: the built-in default)."
        ),
        port: int = typer.Option(8000, "--port", help="TCP port to listen on."),
        host: str = typer.Option(
            "127.0.0.1",
            "--host",
            help="Address to listen on (default 127.0.0.1: this machine only; anything else is reachable "
            "by others and has no login).",
        ),
        open_browser: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
        study: list[Path] = typer.Option(
            [], "--study", help="A study folder (aifabric sweep --out) the page may show; repeatable."
        ),
        catalog_file: Path | None = typer.Option(
            None, "--catalog", help="YAML file overriding catalog records."
        ),
    ) -> None:
        """The decision as a local web page: move an assumption, see the verdict move."""
        from aifabric.cli import run_guarded

        def body() -> int:
            from aifabric.hardware.catalog import load_catalog
            from aifabric.serve.app import create_app, study_folders
            from aifabric.serve.session import Workspace, load_base

            _check(port, host)
            ws = Workspace(load_base(scenario), load_catalog(catalog_file), study_folders(study))
            if host not in LOCAL:
                typer.echo(
                    f"warning: --host {host}: the page is reachable from other machines, without a login",
                    err=True,
                )
            _run(create_app(ws), host, port, open_browser)
            return 0

        run_guarded(body)


def _run(app, host: str, port: int, open_browser: bool) -> None:
    import socket

    import uvicorn

    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    try:  # a port in use is one line, before uvicorn says it its own way
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        import errno

        on_port = exc.errno in (errno.EADDRINUSE, errno.EACCES)
        field, value = ("--port", port) if on_port else ("--host", host)
        raise InputError(f"cannot listen there: {exc.strerror or exc}", field=field, value=value) from None
    typer.echo(f"aifabric serve: {url} (Ctrl-C to stop)", err=True)
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    uvicorn.run(app, host=host, port=port, log_level="warning")
