"""The outputs shown in README.md and docs/ come from real runs: this script runs each marked
command and writes what it prints into the page (``make docs-outputs``); the docs test
(tests/test_docs_commands.py) runs the same commands and fails when a page shows anything else.

A shown output is a fenced block right after a marker comment naming the command::

    <!-- output: aifabric catalog --kind gpu -->
    ```console
    $ aifabric catalog --kind gpu
    (what the command prints, written by this script)
    ```

``<!-- output lines=1-20: CMD -->`` keeps only those lines (``1-20,40-45`` for several ranges,
``end`` and ``end-K`` for the last lines: ``1-end-1`` leaves out a final timing line) and
writes a line ``...`` where lines are left out: the elision is deliberate and visible in the
page source. The block shows stdout; when the command exits non-zero, its stderr follows. A bare
``aifabric ... > FILE`` line of a bash block runs too, before the blocks after it. Commands
run as ``python -m aifabric`` in document order (README.md, then the pages in mkdocs.yml's nav
order) from one scratch folder that links the repository's ``tests/`` and ``scenarios/``, so a
file one command writes is there for the next, at 100 columns without colour.

    python scripts/docs_outputs.py             # rewrite the blocks of every page
    python scripts/docs_outputs.py --check     # exit 1 and name each block that differs
    python scripts/docs_outputs.py risk.md     # only the pages whose path ends so
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MARK = re.compile(
    r"^<!-- output(?: lines=([0-9a-z,-]+))?: ((?:[A-Z_][A-Z0-9_]*=\S+\s+)*aifabric\b.*?) -->\s*$"
)
RANGE = re.compile(r"^(\d+|end(?:-\d+)?)(?:-(\d+|end(?:-\d+)?))?$")
ELIDED = "..."
COLUMNS = "100"


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the marker
    command: str
    lines: str | None  # the lines= spec, or None for the whole output


def pages() -> list[Path]:
    """README.md, then every page of mkdocs.yml's nav in nav order (generated pages excluded)."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    out: list[Path] = [ROOT / "README.md"]

    def walk(item):
        if isinstance(item, str):
            if item.endswith(".md") and (ROOT / "docs" / item).exists():
                out.append(ROOT / "docs" / item)
        elif isinstance(item, dict):
            for v in item.values():
                walk(v)
        elif isinstance(item, list):
            for v in item:
                walk(v)

    walk(nav)
    return list(dict.fromkeys(out))


def blocks(page: Path) -> list[Block]:
    """The marked blocks of one page; a marker must be followed by a fenced block."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out = []
    for i, raw in enumerate(lines):
        m = MARK.match(raw)
        if m:
            if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
                raise SystemExit(f"{page.name}:{i + 1}: an output marker must precede a fenced block")
            out.append(Block(page, i + 1, m.group(2).strip(), m.group(1)))
    return out


def setup_commands(page: Path) -> list[tuple[int, str]]:
    """(line, command) of each bare ``aifabric ... > FILE`` line of a bash block: a file a later
    marked command reads (``roce-config > leaf-1.json``), so it runs first, in document order."""
    out, fence = [], None
    for i, raw in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if raw.startswith("```"):
            fence = None if fence is not None else raw[3:].strip()
        elif fence in ("bash", "sh") and raw.startswith("aifabric ") and " > " in raw:
            out.append((i, raw.split("  #")[0].strip()))
    return out


def env() -> dict:
    src = str(ROOT / "src")
    return dict(
        os.environ,
        PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""),
        COLUMNS=COLUMNS,
        NO_COLOR="1",
        TERM="dumb",
    )


def scratch_dir(base: Path) -> Path:
    """A folder with links to tests/ and scenarios/: commands run there as in a clone's root."""
    for name in ("tests", "scenarios"):
        link = base / name
        if not link.exists():
            link.symlink_to(ROOT / name)
    return base


def run(command: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """``aifabric ARGS`` (optionally after ``VAR=value``) as ``python -m aifabric ARGS`` in bash."""
    m = re.match(r"^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)aifabric(\s|$)", command)
    if m is None:
        raise ValueError(f"not an aifabric command: {command}")
    shell = f'{m.group(1)}"{sys.executable}" -m aifabric{command[m.end(1) + len("aifabric") :]}'
    return subprocess.run(
        ["bash", "-c", shell], cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout
    )


def _keep(spec: str | None, n: int) -> list[int | None]:
    """Line indexes to show, with None where lines are left out."""
    if spec is None:
        return list(range(n))
    keep: list[int] = []
    for part in spec.split(","):
        m = RANGE.match(part)
        if m is None:
            raise ValueError(f"lines={spec}: {part!r} is not N, N-M, end or end-K")
        a, b = m.group(1), m.group(2) or m.group(1)
        keep += range(_bound(a, n) - 1, min(_bound(b, n), n))
    out: list[int | None] = []
    for i in sorted(set(keep)):
        if (out and out[-1] is not None and i != out[-1] + 1) or (not out and i > 0):
            out.append(None)
        out.append(i)
    if not out or (out[-1] is not None and out[-1] < n - 1):
        out.append(None)
    return out


def _bound(text: str, n: int) -> int:
    """A 1-based line number: ``12``, ``end`` (the last line) or ``end-K``."""
    if text.startswith("end"):
        return n - int(text[4:] or 0)
    return int(text)


def render(block: Block, result: subprocess.CompletedProcess, cwd: Path) -> list[str]:
    """The block's lines (between the fences) for this run of its command."""
    text = result.stdout + (result.stderr if result.returncode != 0 else "")
    text = text.replace(str(cwd) + "/", "").replace(str(cwd), ".")
    printed = [ln.rstrip() for ln in text.rstrip("\n").splitlines()]
    shown = [ELIDED if i is None else printed[i] for i in _keep(block.lines, len(printed))]
    return [f"$ {block.command}"] + shown


def shown(block: Block) -> list[str]:
    """The lines between the fences of the block as the page has it now."""
    lines = block.page.read_text(encoding="utf-8").splitlines()
    i = block.line + 1
    j = i
    while not lines[j].startswith("```"):
        j += 1
    return lines[i:j]


def _write(block: Block, body: list[str]) -> None:
    lines = block.page.read_text(encoding="utf-8").splitlines()
    i = block.line  # the fence opening (0-based index of the line after the marker)
    lang = lines[i][3:].strip() or "console"
    j = i + 1
    while not lines[j].startswith("```"):
        j += 1
    lines[i : j + 1] = [f"```{lang}", *body, "```"]
    block.page.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    only = [a for a in argv if not a.startswith("--")]
    differ = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = scratch_dir(Path(tmp))
        for page in pages():
            if only and not any(str(page).endswith(o) for o in only):
                continue
            todo = []
            setups = setup_commands(page)
            for block in blocks(page):  # run in document order
                while setups and setups[0][0] < block.line:
                    run(setups.pop(0)[1], cwd)
                body = render(block, run(block.command, cwd), cwd)
                if body != shown(block):
                    differ.append(f"{page.relative_to(ROOT)}:{block.line}: {block.command}")
                    todo.append((block, body))
            if not check:
                for block, body in reversed(todo):  # from the end: earlier line numbers hold
                    _write(block, body)
    for d in differ:
        print(("differs: " if check else "updated: ") + d, file=sys.stderr)
    return 1 if (check and differ) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
