"""Ahead-of-time kernels (issue 19): found only when built from the sources in use, ignored with
AIFABRIC_AOT=0, and — built — the same results as numba's JIT without importing numba."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.flow import _aot

ROOT = Path(__file__).resolve().parents[1]


def test_key_follows_the_source_bytes(tmp_path):
    src = tmp_path / "k.py"
    src.write_text("X = 1\n")
    k1 = _aot.key([src])
    assert k1 == _aot.key([src]) and len(k1) == 16
    src.write_text("X = 2\n")
    assert _aot.key([src]) != k1


def test_no_build_means_the_jit_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv(_aot.DIR_ENV, str(tmp_path))
    from aifabric.sim import aot

    aot.kernel.cache_clear()
    try:
        from aifabric.sim import kernel as K

        assert aot.kernel() is K and not aot.uses_aot()
        assert _aot.load("kernel", aot.SOURCES) is None
    finally:
        aot.kernel.cache_clear()


def test_a_stale_build_is_not_loaded(tmp_path, monkeypatch):
    """A file under another key's name (other sources) is never picked up."""
    monkeypatch.setenv(_aot.DIR_ENV, str(tmp_path))
    src = tmp_path / "k.py"
    src.write_text("X = 1\n")
    path = _aot.artifact("t", [src])
    path.write_bytes(b"not an extension")
    src.write_text("X = 2\n")  # edited after the "build"
    assert _aot.load("t", [src]) is None
    src.write_text("X = 1\n")
    monkeypatch.setenv(_aot.ENV, "0")
    assert _aot.load("t", [src]) is None


def test_numba_disable_jit_means_plain_python(tmp_path, monkeypatch):
    """NUMBA_DISABLE_JIT=1 (the tests' plain-Python kernel) is honoured even with a build present:
    the loader does not open it. A damaged file is not loaded either (the JIT kernel runs)."""
    import importlib.machinery

    monkeypatch.setenv(_aot.DIR_ENV, str(tmp_path))
    src = tmp_path / "k.py"
    src.write_text("X = 1\n")
    _aot.artifact("t", [src]).write_bytes(b"not an extension")
    opened = []

    class Spy(importlib.machinery.ExtensionFileLoader):
        def __init__(self, name, path):
            opened.append(path)
            super().__init__(name, path)

    monkeypatch.setattr(importlib.machinery, "ExtensionFileLoader", Spy)
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    assert _aot.load("t", [src]) is None and opened == []
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "0")
    assert _aot.load("t", [src]) is None and len(opened) == 1


def test_arguments_the_build_refuses_go_to_the_jit_kernel():
    from aifabric.sim.aot import run_or_jit

    def aot(x):
        if not isinstance(x, int):
            raise TypeError("can't unbox")
        return ("aot", x)

    run = run_or_jit(aot, lambda: lambda x: ("jit", x))
    assert run(3) == ("aot", 3)
    assert run(3.5) == ("jit", 3.5)


_RUN = (
    "import json, sys\n"
    "from aifabric.cli import run\n"
    "code = run(['simulate', sys.argv[1], '--json', '--no-progress'])\n"
    "print(json.dumps({'numba': 'numba' in sys.modules, 'code': code}), file=sys.stderr)\n"
)


def _simulate(scenario: Path, env: dict) -> tuple[dict, dict]:
    p = subprocess.run(
        [sys.executable, "-c", _RUN, str(scenario)], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    out["engine"].pop("wall_s")
    return out, json.loads(p.stderr.strip().splitlines()[-1])


@pytest.mark.slow
def test_built_kernels_give_the_jit_results_without_numba(tmp_path):
    """Build into a scratch folder (1-3 minutes), then run shipped scenarios both ways: identical
    JSON (bar wall time), and the AOT run never imports numba."""
    env = {**os.environ, _aot.DIR_ENV: str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    b = subprocess.run(
        [sys.executable, "-m", "aifabric.sim.aot"], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert b.returncode == 0, b.stderr[-2000:]
    check = subprocess.run(
        [sys.executable, "-m", "aifabric.sim.aot", "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert check.returncode == 0, check.stdout
    for name in ("incast32", "perm128-hpcc", "ring5-deadlock", "incast32-uet", "incast32-uet-rccc"):
        sc = ROOT / "scenarios" / f"{name}.yaml"
        aot, aot_meta = _simulate(sc, env)
        jit, jit_meta = _simulate(sc, {**env, _aot.ENV: "0"})
        assert aot == jit, name
        assert aot_meta["code"] == jit_meta["code"]
        assert aot_meta["numba"] is False and jit_meta["numba"] is True, name


def test_a_stale_kernel_cache_index_is_dropped(tmp_path):
    """numba checks a cached function against its own file only; the kernel's sources read each
    other's constants, so every cache index of those modules older than the newest source goes."""
    import os

    import pytest

    from aifabric.sim import aot_load
    from aifabric.sim import kernel as K

    if not hasattr(K.run, "py_func"):
        pytest.skip("NUMBA_DISABLE_JIT=1: nothing cached")
    from numba.core.caching import FunctionCache

    folder = Path(FunctionCache(K.run.py_func)._cache_path)
    folder.mkdir(parents=True, exist_ok=True)
    stale = folder / "uet.zz_test_stale-1.py311.nbi"
    fresh = folder / "uet.zz_test_fresh-1.py311.nbi"
    other = folder / "zz_other_module.f-1.py311.nbi"
    for f in (stale, fresh, other):
        f.write_bytes(b"")
    newest = max(s.stat().st_mtime for s in aot_load.SOURCES)
    os.utime(stale, (newest - 10, newest - 10))
    os.utime(other, (newest - 10, newest - 10))
    try:
        aot_load._drop_stale_cache(K.run)
        assert not stale.exists() and fresh.exists() and other.exists()
    finally:
        for f in (stale, fresh, other):
            f.unlink(missing_ok=True)
