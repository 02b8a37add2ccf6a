"""The regression corpus (``tests/corpus``): bad or extreme inputs that once crashed, hung or
were silently accepted, each run as a test. A scenario file's first lines say what must happen
(``# expect: CODE "fragment of the stderr line"``, optionally ``# env: NAME=VALUE``); ``simulate``
must end that way within the time bound, and ``validate`` must agree (it rejects exactly the
files ``simulate`` rejects). ``cli.txt`` holds command lines with their expected exit code and
stderr fragment."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from test_fuzz_support import assert_clean, cli

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "corpus"
EXPECT = re.compile(r'^# expect: (\d) "(.*)"$', re.M)
ENV = re.compile(r"^# env: (\w+)=(\S+)$", re.M)


def _scenario_cases():
    for p in sorted(CORPUS.glob("*.yaml")):
        text = p.read_bytes().decode("utf-8", errors="replace")
        m = EXPECT.search(text)
        if m:
            yield pytest.param(p, int(m.group(1)), m.group(2), dict(ENV.findall(text)), id=p.stem)


def _cli_cases():
    for n, line in enumerate((CORPUS / "cli.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        code, frag, argv = (x.strip() for x in line.split("|", 2))
        yield pytest.param(int(code), frag, argv, id=f"cli-{n}-{argv.split()[0]}")


def test_corpus_is_complete():
    """Every scenario in the corpus states its expected outcome (or is run from cli.txt)."""
    cli_text = (CORPUS / "cli.txt").read_text()
    for p in CORPUS.glob("*.yaml"):
        text = p.read_bytes().decode("utf-8", errors="replace")
        assert EXPECT.search(text) or p.name in cli_text, p.name


@pytest.mark.parametrize("path,code,fragment,env", list(_scenario_cases()))
def test_corpus_scenario(monkeypatch, path, code, fragment, env):
    """simulate ends with the expected code and line, cleanly and in time; validate agrees."""
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    argv = ["simulate", str(path), "--json", "--no-progress"]
    o = cli(argv, bound_s=60)
    assert_clean(o, argv)
    assert o.code == code, (o.code, o.stderr)
    assert fragment in o.stderr, o.stderr
    v = cli(["validate", str(path)], bound_s=60)
    assert_clean(v, ["validate", str(path)], many_lines_ok=True)
    assert (v.code == 2) == (code == 2), (v.code, v.stderr)


@pytest.mark.parametrize("code,fragment,argv", list(_cli_cases()))
def test_corpus_command_line(tmp_path, code, fragment, argv):
    """Each corpus command line ends with its expected code and one stderr line containing the fragment."""
    args = [
        a.replace("{scenarios}", str(ROOT / "scenarios"))
        .replace("{tmp}", str(tmp_path))
        .replace("{corpus}", str(CORPUS))
        for a in shlex.split(argv)
    ]
    o = cli(args, bound_s=60)
    assert_clean(o, args)
    assert o.code == code and fragment in o.stderr, (o.code, o.stderr)
