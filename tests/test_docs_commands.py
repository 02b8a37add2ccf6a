"""Every `aifabric` command in README.md and the documentation site (docs/, the pages of
mkdocs.yml's nav) runs as written, and every output a page shows is what the command prints.

The pages are read in document order: README.md, then the nav's pages. A command is

* a line of a fenced block that starts with ``aifabric`` (or ``$ aifabric``, or ``VAR=value
  aifabric``), or
* an inline code span that starts with ``aifabric`` and has arguments.

Each one is either

* **run**: from a scratch directory that links the repository's ``tests/`` and ``scenarios/``, in
  document order (so a file one command writes, such as ``cal-p5.yaml``, exists for the next); it
  must exit 0 and never print a traceback; a command whose output the page shows sits in a block
  marked ``<!-- output: COMMAND -->`` and must print exactly that block, as
  ``scripts/docs_outputs.py`` (``make docs-outputs``) renders it (``lines=`` elisions included); or
* **checked**: a synopsis (``[--gpus N]``, ``FILE``, ``…``, ``a|b``), a bare reference to a
  command, or one of the few listed ``ILLUSTRATIVE`` commands that name a file the docs do not
  ship: its subcommand must exist and every ``--flag`` it names must be in that subcommand's
  ``--help``.

A ``$ aifabric`` line followed by output lines in an unmarked block fails: shown output is never
hand-written. ``aifabric audit`` and ``diagnose`` may exit 1 (findings, by design). The slow
example study (``aifabric sweep`` and the ``results`` queries of its output) runs in
tests/test_sweep_example.py, so it is only checked here."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("docs_outputs", ROOT / "scripts" / "docs_outputs.py")
docs_outputs = sys.modules.setdefault("docs_outputs", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(docs_outputs)
PAGES = docs_outputs.pages()
# Commands whose exit code 1 means "ran and found problems" (interface contract).
FINDINGS_EXIT_1 = ("audit", "diagnose")
# Pages other work writes, linked in the nav, whose commands are checked for flags only (and whose
# text the history and hand-written-output rules skip) until their outputs are marked for
# scripts/docs_outputs.py; their python blocks are not run either. Every page is real now (the
# inputs its examples need are in tests/fixtures/docs/); a new page goes here only while it is written.
OTHER_WORK: set[str] = set()

# Commands that name a file the docs do not ship (the reader's own), checked for flags only.
ILLUSTRATIVE = {
    "aifabric validate --symmetry": "six jobs up to 16,384 GPUs, each against its twin (over the 300 s "
    "limit on 2 cores); the check itself runs in tests/test_like_for_like.py (validation and slow groups)",
    "aifabric plan --catalog quotes.yaml": "quotes.yaml is the reader's own price file",
    "aifabric simulate --mode flow": "prose naming the flow mode of `simulate FILE`",
    "aifabric results --ci": "prose naming the option",
    "aifabric risk --baseline": "prose naming the option",
    "aifabric collective --routing": "prose naming the option",
    "aifabric compare s.yaml --json": "s.yaml is the two advisor/risk keys the sentence gives",
    "aifabric serve scenarios/advisor/rule3-thousand-gpu.yaml --study runs/size-vs-gpu": (
        "a server that runs until Ctrl-C"
    ),
}
# Commands run elsewhere (slow, or with their outputs compared there).
RUN_ELSEWHERE = (
    (
        "aifabric diagnose --topology scenarios/pause-storm.yaml",
        "exits 1 by design (findings); tests/test_diagnose.py",
    ),
    ("aifabric sweep scenarios/studies/size-vs-gpu.yaml", "tests/test_sweep_example.py (slow)"),
    ("aifabric results runs/size-vs-gpu", "needs the sweep above; tests/test_sweep_example.py"),
)
# Commands run as written in the slow group (`make test-slow`, run by CI after `make test`): each takes
# 10-130 s on 2 shared cores, and the default part of this file has to stay near 2 minutes.
SLOW = (
    "aifabric compare --designs ",  # four designs priced and measured
    "aifabric compare --gpus 256 --workload trading",  # the trading workload's own testbed
    "aifabric compare --report ",  # the HTML report (rendered in headless Chromium by test_report)
    "aifabric compare --placement ",  # placement on the cluster's testbed
    "aifabric compare --gpus 2048 ",  # 2,048 GPUs: MoE and 405B jobs
    "aifabric validate --routing",  # every routing mode in both engines
    "aifabric collective all-reduce --mode flow --gpus 100000",  # 100,000 GPUs in flow mode
    "aifabric train tests/fixtures/docs/train-405b-16k-ddp.yaml",  # 16,384 GPUs, CP searched
    "aifabric compare tests/fixtures/docs/compare-70b-1k-ddp.yaml",  # 1,024 GPUs, ZeRO-0
)
PLACEHOLDER = re.compile(
    r"\[|…|\.\.\.|\b(?:SCENARIO|FILE|OP|NAME|COMMAND|CONFIG|DIR|CAL|STUDY|MEASUREMENT|ID|N|X)\b"
    r"|[a-z0-9]\|[a-z0-9]"
)
ENV_PREFIX = re.compile(r"^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)aifabric(\s|$)")


@dataclass
class Command:
    page: Path
    line: int
    text: str
    fenced: bool
    shown: list[str]  # the page's output lines after it (fenced console blocks only)
    block: object = None  # the docs_outputs.Block when the page marks its output

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def id(self) -> str:
        return f"{self.page.stem}:L{self.line}:{self.text[:60]}"


def _commands() -> list[Command]:
    return [c for page in PAGES for c in _page_commands(page)]


def _page_commands(page: Path) -> list[Command]:
    lines = page.read_text(encoding="utf-8").splitlines()
    marks = {b.line + 1: b for b in docs_outputs.blocks(page)}  # 1-based line of the fence
    out: list[Command] = []
    para, para_start, no = [], 0, 0

    def flush_paragraph():
        text = " ".join(para)
        for m in re.finditer(r"`([^`]+)`", text):
            span = " ".join(m.group(1).split())
            if ENV_PREFIX.match(span) and len(span.split()) > 1:
                out.append(Command(page, para_start, span, False, []))
        para.clear()

    while no < len(lines):
        raw = lines[no]
        no += 1
        if raw.startswith("```"):
            flush_paragraph()
            mark = marks.get(no)
            lang, body, first = raw[3:].strip(), [], no + 1
            while no < len(lines) and not lines[no].startswith("```"):
                body.append(lines[no])
                no += 1
            no += 1
            if lang not in ("", "bash", "sh", "console", "shell"):
                continue
            # a block of bare commands (bash, or every line a command) or `$ ` prompts with output
            bare = lang in ("bash", "sh") or all(ENV_PREFIX.match(b.strip()) for b in body if b.strip())
            current = None
            for i, b in enumerate(body):
                s = b.strip()
                prompt = s.startswith("$ ")
                s = s[2:] if prompt else s
                if (prompt or bare) and ENV_PREFIX.match(s):
                    text = s.split("  #")[0].split(" # ")[0].strip()
                    current = Command(page, first + i, text, True, [], mark)
                    out.append(current)
                elif prompt:
                    current = None  # `$ echo $?` and the like: not ours
                elif current is not None:
                    current.shown.append(b)
            continue
        if raw.strip():
            if not para:
                para_start = no
            para.append(raw.strip())
        else:
            flush_paragraph()
    flush_paragraph()
    return out


def _kind(c: Command) -> str:
    """run | check (flags only) | elsewhere."""
    if c.page.name in OTHER_WORK:
        return "check"
    if any(c.text.startswith(p) for p, _ in RUN_ELSEWHERE):
        return "elsewhere"
    if c.text in ILLUSTRATIVE or PLACEHOLDER.search(c.text):
        return "check"
    if not c.fenced and len(c.text.split()) <= 2:  # `aifabric compare` in prose: a reference
        return "check"
    return "run"


COMMANDS = _commands()


def _argv(text: str) -> tuple[dict, list[str]]:
    m = ENV_PREFIX.match(text)
    env = dict(kv.split("=", 1) for kv in m.group(1).split())
    return env, text[m.end(1) :].split()


@functools.cache
def _help(sub: str) -> str:
    args = [sys.executable, "-m", "aifabric"] + ([sub] if sub else []) + ["--help"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60, env=_env(), cwd=ROOT)
    assert r.returncode == 0, f"`aifabric {sub} --help` exits {r.returncode}: {r.stderr[-300:]}"
    return r.stdout


def _env() -> dict:
    return dict(
        os.environ,
        PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        COLUMNS="200",
        NO_COLOR="1",
    )


def test_docs_have_commands_of_each_kind():
    kinds = [_kind(c) for c in COMMANDS]
    assert kinds.count("run") >= 15 and kinds.count("check") >= 10, kinds
    subs = {_argv(c.text)[1][1] for c in COMMANDS if len(_argv(c.text)[1]) > 1}
    assert {"compare", "plan", "simulate", "train", "calibrate", "collective", "risk", "sweep"} <= subs
    marked = [c.text.split()[1] for c in COMMANDS if c.block is not None]
    assert {"compare", "plan", "train", "catalog", "risk", "collective", "calibrate", "validate"} <= set(
        marked
    )
    assert marked.count("audit") >= 4, "the audit page shows its findings"
    runs = [c.text.split()[1] for c in COMMANDS if _kind(c) == "run"]
    assert runs.count("audit") >= 5 and runs.count("roce-config") >= 4


def test_shown_output_is_always_generated():
    """Output lines after a `$ aifabric` line only in blocks that scripts/docs_outputs.py fills, and
    each marked block shows exactly the command its marker names."""
    bad = [
        c.where
        for c in COMMANDS
        if c.fenced and c.shown and c.block is None and c.page.name not in OTHER_WORK
    ]
    assert not bad, f"hand-written command output (mark it <!-- output: COMMAND -->): {bad}"
    for page in PAGES:
        for b in docs_outputs.blocks(page):
            first = docs_outputs.shown(b)[:1]
            assert first == [f"$ {b.command}"], f"{page.name}:{b.line}: the block must start $ {b.command}"


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if _kind(c) == "check"], ids=lambda c: c.id)
def test_docs_synopsis_names_real_flags(cmd: Command):
    """The subcommand exists and every --flag the page names is in its --help."""
    _, argv = _argv(cmd.text)
    sub = argv[1] if len(argv) > 1 and not argv[1].startswith("-") else ""
    if sub.isupper():  # `aifabric --debug COMMAND`, `aifabric NAME … --json`
        sub = ""
    text = _help(sub)
    for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", cmd.text):
        if sub == "" and flag in ("--json",):
            continue  # "aifabric NAME … --json": the flag of each command, not of the top level
        assert flag in text, f"{cmd.where}: `aifabric {sub}` has no {flag}"


@functools.cache
def docs_reference():
    """scripts/docs_reference.py: the pages mkdocs generates on every build."""
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "scripts" / "docs_reference.py")
    mod = sys.modules.setdefault("docs_reference", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(mod)
    return mod


def _to_run() -> list[Command]:
    """The run-kind commands in document order: every marked one, and each other text once."""
    runs = [c for c in COMMANDS if _kind(c) == "run"]
    marked = {c.text for c in runs if c.block is not None}
    seen: set[str] = set()
    out = []
    for c in runs:
        if c.block is not None or (c.text not in marked and c.text not in seen):
            out.append(c)
            seen.add(c.text)
    return out


_RUN = _to_run()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return docs_outputs.scratch_dir(tmp_path_factory.mktemp("docs"))


@pytest.mark.parametrize(
    "cmd",
    [pytest.param(c, marks=pytest.mark.slow) if c.text.startswith(SLOW) else c for c in _RUN],
    ids=lambda c: c.id,
)
def test_docs_command_runs_as_written(cmd: Command, scratch):
    """Exit 0 (or, for a marked block, the output the page shows, errors included), no traceback."""
    r = docs_outputs.run(cmd.text, scratch, timeout=300)
    both = r.stdout + r.stderr
    assert "Traceback" not in both, f"{cmd.where}: {cmd.text}\n{both[-2000:]}"
    if cmd.block is None:
        ok = (0, 1) if cmd.text.split()[1] in FINDINGS_EXIT_1 else (0,)
        assert r.returncode in ok, f"{cmd.where}: `{cmd.text}` exits {r.returncode}\n{both[-1500:]}"
        return
    got = docs_outputs.render(cmd.block, r, scratch)
    want = docs_outputs.shown(cmd.block)
    assert got == want, (
        f"{cmd.where} shows other output than `{cmd.text}` prints (exit {r.returncode}); "
        "run make docs-outputs\n" + "\n".join(_diff(want, got))
    )


def _diff(want: list[str], got: list[str]) -> list[str]:
    import difflib

    return list(difflib.unified_diff(want, got, "page", "printed", lineterm="", n=1))[:40]


def _python_blocks() -> list[tuple[str, str]]:
    out = []
    for page in [p for p in PAGES if p.name not in OTHER_WORK]:
        lines, i = page.read_text(encoding="utf-8").splitlines(), 0
        while i < len(lines):
            if lines[i].strip() == "```python":
                j = i + 1
                while not lines[j].startswith("```"):
                    j += 1
                out.append((f"{page.relative_to(ROOT)}:{i + 2}", "\n".join(lines[i + 1 : j])))
                i = j
            i += 1
    return out


@pytest.mark.parametrize("block", _python_blocks(), ids=lambda b: b[0])
def test_docs_python_block_runs(block, scratch):
    """Every ```python block of the pages runs as written, on its own, from the scratch folder."""
    where, code = block
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=scratch, env=_env(), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, f"python block at {where} fails:\n{r.stderr[-2000:]}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_point_only_inside_the_repository(page):
    """No path outside the repository (a user's clone has no ../shared), and every relative link
    and every `docs/…`, `tests/…`, `scenarios/…`, `bench/…` path a page names exists."""
    text = page.read_text(encoding="utf-8")
    assert "shared/" not in text
    links = re.findall(r"\]\(([^)#:]+)\)", text)
    paths = re.findall(r"`((?:docs|tests|scenarios|bench|src/aifabric)/[\w./-]+)`", text)
    generated = {(ROOT / "docs" / g).resolve() for g in docs_reference().PAGES}
    missing = sorted(
        {p for p in links if not (page.parent / p).exists() and (page.parent / p).resolve() not in generated}
    )
    missing += sorted({p for p in paths if "*" not in p and not (ROOT / p).exists()})
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_no_work_history_in_user_docs():
    """User pages carry no ticket numbers or pytest internals (history is in CHANGELOG.md)."""
    pat = re.compile(r"\bissues? #?\d+\b|(?<![\w&])#\d{1,3}\b|\bpytest\b", re.I)
    dev = {"development.md", "architecture.md"} | OTHER_WORK
    bad = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()[:80]}"
        for p in PAGES
        if p.name not in dev
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pat.search(line)
    ]
    assert not bad, "\n".join(bad)
