"""The audit page (docs/commands/audit.md: `aifabric audit` / `aifabric roce-config`) runs as
written: every `$ aifabric` command in its console blocks runs from the repository root (in a
scratch directory that links `tests/`, so that files it writes stay out of the checkout), never
exits 2 or prints a traceback, and where the page shows the output, the output is exactly that."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "commands" / "audit.md"


def _blocks() -> list[list[tuple[str, list[str]]]]:
    sec = PAGE.read_text(encoding="utf-8")
    blocks, cur, inside = [], None, False
    for line in sec.splitlines():
        if line.startswith("```console"):
            inside, cur = True, []
            continue
        if inside and line.startswith("```"):
            blocks.append(cur)
            inside = False
            continue
        if inside:
            if line.startswith("$ "):
                cur.append((line[2:], []))
            elif cur:
                cur[-1][1].append(line)
    return blocks


def test_audit_page_has_commands():
    """The page has console blocks with aifabric audit and roce-config commands."""
    cmds = [c for b in _blocks() for c, _ in b]
    assert sum(c.startswith("aifabric audit") for c in cmds) >= 5
    assert sum(c.startswith("aifabric roce-config") for c in cmds) >= 4


def test_audit_page_commands_run_as_written(tmp_path):
    """Each command: exit 0 or 1 (never 2), no traceback; shown output matches exactly."""
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    exe = f'"{sys.executable}" -m aifabric'
    for block in _blocks():
        for cmd, expected in block:
            assert cmd.startswith("aifabric ")
            run = subprocess.run(
                ["bash", "-c", exe + cmd[len("aifabric") :]],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert run.returncode in (0, 1), (cmd, run.returncode, run.stderr)
            assert "Traceback" not in run.stderr, (cmd, run.stderr)
            if expected:
                got = [ln.rstrip() for ln in run.stdout.rstrip("\n").splitlines()]
                assert got == [ln.rstrip() for ln in expected], cmd
