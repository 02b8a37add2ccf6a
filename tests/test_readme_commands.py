"""Every `aifabric` command in README.md runs as written (issue #16: "a README that is true").

The README is read in document order. A command is

* a line of a fenced block that starts with ``aifabric`` (or ``$ aifabric``, or ``VAR=value
  aifabric``), or
* an inline code span that starts with ``aifabric`` and has arguments.

Each one is either

* **run**: from a scratch directory that links the repository's ``tests/`` and ``scenarios/``, in
  README order (so a file one command writes, such as ``cal-p5.yaml``, exists for the next); it must
  exit with the code the README implies (0, or 2 where the README shows ``error:`` lines after it),
  never print a traceback, and where the README shows the output of a command that has one fixed
  answer, print exactly that; or
* **checked**: a synopsis (``[--gpus N]``, ``FILE``, ``…``, ``a|b``), a bare reference to a
  command, or one of the few listed ``ILLUSTRATIVE`` commands that name a file the README does not
  ship: its subcommand must exist and every ``--flag`` it names must be in that subcommand's
  ``--help``.

The audit section is run, with its outputs compared, by tests/test_audit_readme.py; the slow
example study (``aifabric sweep`` and the ``results`` queries of its output) by
tests/test_sweep_example.py, so both are only checked here."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
AUDIT_SECTION = "## `aifabric audit` and `aifabric roce-config`"

# Commands that name a file the README does not ship (the reader's own), checked for flags only.
ILLUSTRATIVE = {
    "aifabric plan --catalog quotes.yaml": "quotes.yaml is the reader's own price file",
    "aifabric simulate --mode flow": "prose naming the flow mode of `simulate FILE`",
    "aifabric results --ci": "prose naming the option",
    "aifabric risk --baseline": "prose naming the option",
    "aifabric collective --routing": "prose naming the option",
    "aifabric compare s.yaml --json": "s.yaml is the two advisor/risk keys the sentence gives",
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
# 10-25 s on 2 cores, and the default suite has to stay near 10 minutes.
SLOW = (
    "aifabric compare --designs ",  # four designs priced and measured
    "aifabric compare --gpus 256 --workload trading",  # the trading workload's own testbed
    "aifabric compare --report ",  # the HTML report (rendered in headless Chromium by test_report)
    "aifabric validate --symmetry",  # six jobs twice (the validation group runs it: test_like_for_like)
)
# Output shown in the README that depends on the machine (free memory), compared by prefix only.
MACHINE_DEPENDENT = ("AIFABRIC_MEMORY_LIMIT=",)
PLACEHOLDER = re.compile(
    r"\[|…|\.\.\.|\b(?:SCENARIO|FILE|OP|NAME|COMMAND|CONFIG|DIR|CAL|STUDY|MEASUREMENT|ID|N|X)\b"
    r"|[a-z0-9]\|[a-z0-9]"
)
ENV_PREFIX = re.compile(r"^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)aifabric(\s|$)")


@dataclass
class Command:
    line: int
    text: str
    fenced: bool
    shown: list[str]  # the README's output lines after it (fenced console blocks only)
    in_audit: bool

    @property
    def id(self) -> str:
        return f"L{self.line}:{self.text[:60]}"


def _commands() -> list[Command]:
    lines = README.read_text(encoding="utf-8").splitlines()
    out: list[Command] = []
    in_audit, para, para_start, no = False, [], 0, 0

    def flush_paragraph():
        text = " ".join(para)
        for m in re.finditer(r"`([^`]+)`", text):
            span = " ".join(m.group(1).split())
            if ENV_PREFIX.match(span) and len(span.split()) > 1:
                out.append(Command(para_start, span, False, [], in_audit))
        para.clear()

    while no < len(lines):
        raw = lines[no]
        no += 1
        if raw.startswith("## "):
            in_audit = raw.startswith(AUDIT_SECTION)
        if raw.startswith("```"):
            flush_paragraph()
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
                    current = Command(first + i, text, True, [], in_audit)
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
    if c.in_audit:
        return "elsewhere"
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


def test_readme_has_commands_of_each_kind():
    kinds = [_kind(c) for c in COMMANDS]
    assert kinds.count("run") >= 15 and kinds.count("check") >= 10, kinds
    subs = {_argv(c.text)[1][1] for c in COMMANDS if len(_argv(c.text)[1]) > 1}
    assert {"compare", "plan", "simulate", "train", "calibrate", "collective", "risk", "sweep"} <= subs


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if _kind(c) == "check"], ids=lambda c: c.id)
def test_readme_synopsis_names_real_flags(cmd: Command):
    """The subcommand exists and every --flag the README names is in its --help."""
    _, argv = _argv(cmd.text)
    sub = argv[1] if len(argv) > 1 and not argv[1].startswith("-") else ""
    if sub.isupper():  # `aifabric --debug COMMAND`, `aifabric NAME … --json`
        sub = ""
    text = _help(sub)
    for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", cmd.text):
        if sub == "" and flag in ("--json",):
            continue  # "aifabric NAME … --json": the flag of each command, not of the top level
        assert flag in text, f"README line {cmd.line}: `aifabric {sub}` has no {flag}"


_RUN = list({c.text: c for c in reversed([c for c in COMMANDS if _kind(c) == "run"])}.values())[::-1]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("readme")
    for name in ("tests", "scenarios"):
        (d / name).symlink_to(ROOT / name)
    return d


def _expected_exit(c: Command) -> int:
    if any(line.startswith("error:") for line in c.shown):
        return 2
    return 0


@pytest.mark.parametrize(
    "cmd",
    [pytest.param(c, marks=pytest.mark.slow) if c.text.startswith(SLOW) else c for c in _RUN],
    ids=lambda c: c.id,
)
def test_readme_command_runs_as_written(cmd: Command, scratch):
    env_extra, argv = _argv(cmd.text)
    shell = " ".join(f"{k}={v}" for k, v in env_extra.items())
    shell += f' "{sys.executable}" -m aifabric' + cmd.text[ENV_PREFIX.match(cmd.text).end() - 1 :]
    r = subprocess.run(
        ["bash", "-c", shell], cwd=scratch, env=_env(), capture_output=True, text=True, timeout=300
    )
    both = r.stdout + r.stderr
    assert "Traceback" not in both, f"README line {cmd.line}: {cmd.text}\n{both[-2000:]}"
    want = _expected_exit(cmd)
    assert r.returncode == want, (
        f"README line {cmd.line}: `{cmd.text}` exits {r.returncode}, the README implies {want}\n"
        f"{both[-1500:]}"
    )
    shown = [s for s in cmd.shown if s.strip() and not s.startswith("$")]
    if want == 2 and shown:
        got = [s for s in r.stderr.splitlines() if s.strip()]
        if cmd.text.startswith(MACHINE_DEPENDENT):
            assert [g.split(";")[0][:60] for g in got] == [s.split(";")[0][:60] for s in shown]
        else:
            assert got == shown, f"README line {cmd.line} shows other output than the command prints"


def _python_blocks() -> list[tuple[int, str]]:
    lines = README.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            out.append((i + 2, "\n".join(lines[i + 1 : j])))
            i = j
        i += 1
    return out


@pytest.mark.parametrize("block", _python_blocks(), ids=lambda b: f"L{b[0]}")
def test_readme_python_block_runs(block, scratch):
    """Every ```python block of the README runs as written, on its own, from the scratch folder."""
    line, code = block
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=scratch, env=_env(), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, f"README python block at line {line} fails:\n{r.stderr[-2000:]}"


def test_readme_points_only_inside_the_repository():
    """No path outside the repository (a user's clone has no ../shared), and every relative link
    and every `docs/…`, `tests/…`, `scenarios/…`, `bench/…` path the README names exists."""
    text = README.read_text(encoding="utf-8")
    assert "../" not in text and "shared/" not in text
    links = re.findall(r"\]\(([^)#:]+)\)", text)
    paths = re.findall(r"`((?:docs|tests|scenarios|bench|src/aifabric)/[\w./-]+)`", text)
    missing = sorted({p for p in links + paths if "*" not in p and not (ROOT / p).exists()})
    assert not missing, f"README names paths that do not exist: {missing}"
