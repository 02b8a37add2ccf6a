"""Every in-process cache is bounded, so a long-lived process (the test suite, a sweep, a notebook)
does not grow with every distinct input: module-level ``functools`` caches have a ``maxsize`` (or
take no arguments, one entry at most), module-level memos are :class:`~aifabric.stages.cache.Memo`
with a ``maxsize``. README "Set up" gives the suite's measured peak memory."""

import functools
import importlib
import inspect
import pkgutil
import types

import pytest

import aifabric
from aifabric.stages import cache
from aifabric.stages.cache import Memo
from aifabric.stages.risk import testbed as T

MAX_ENTRIES = 1024  # a bound above this is no bound for objects the size of a topology or a measurement


def _modules():
    for m in pkgutil.walk_packages(aifabric.__path__, "aifabric."):
        if not m.name.endswith("__main__"):  # __main__ runs the CLI
            yield importlib.import_module(m.name)


def unbounded(mod) -> list[str]:
    """The module-level caches of ``mod`` that can grow without limit, as ``module.name: why``."""
    out = []
    for name, v in vars(mod).items():
        if isinstance(v, functools._lru_cache_wrapper):
            if getattr(v, "__module__", None) != mod.__name__:
                continue  # imported from elsewhere: checked in its own module
            size = v.cache_info().maxsize
            if size is None and inspect.signature(v).parameters:
                out.append(f"{mod.__name__}.{name}: functools cache without maxsize")
            elif size is not None and size > MAX_ENTRIES:
                out.append(f"{mod.__name__}.{name}: maxsize {size} > {MAX_ENTRIES}")
        elif isinstance(v, dict) and any(w in name.upper() for w in ("MEMO", "CACHE")):
            if not isinstance(v, Memo):
                out.append(f"{mod.__name__}.{name}: a plain {type(v).__name__} memo (use stages.cache.Memo)")
            elif v.maxsize > MAX_ENTRIES:
                out.append(f"{mod.__name__}.{name}: Memo maxsize {v.maxsize} > {MAX_ENTRIES}")
    return out


def test_every_module_level_cache_is_bounded():
    """Imports every aifabric module and lists its caches: none unbounded, and the known ones found
    (so the walk cannot silently miss them)."""
    found, bad = [], []
    for mod in _modules():
        bad += unbounded(mod)
        for n, v in vars(mod).items():
            if isinstance(v, Memo) or (
                isinstance(v, functools._lru_cache_wrapper) and v.__module__ == mod.__name__
            ):
                found.append(f"{mod.__name__}.{n}")
    assert not bad, bad
    for known in (
        "aifabric.stages.measure.flows.rail_topology",
        "aifabric.stages.measure.flows._run_pattern",
        "aifabric.stages.risk.testbed._MEMO",
    ):
        assert known in found


def test_the_check_finds_unbounded_caches():
    """The detector itself: an argument-taking ``functools.cache``, a huge ``lru_cache`` and a
    plain-dict memo are reported; a zero-argument cache and a bounded Memo are not."""
    mod = types.ModuleType("fake_caches")

    def f(x):
        return x

    def g():
        return 1

    for fn in (f, g):
        fn.__module__ = mod.__name__
    mod.f = functools.cache(f)
    mod.big = functools.lru_cache(maxsize=10**6)(f)
    mod.g = functools.cache(g)
    mod._MEMO = {}
    mod._CACHE = Memo(maxsize=8)
    assert sorted(b.split(":")[0] for b in unbounded(mod)) == [
        "fake_caches._MEMO",
        "fake_caches.big",
        "fake_caches.f",
    ]


def test_memo_keeps_the_most_recently_used():
    m = Memo(maxsize=2)
    m["a"], m["b"] = 1, 2
    assert m.get("a") == 1  # "a" is now the most recent
    m["c"] = 3
    assert list(m) == ["a", "c"] and m.get("b") is None and m.get("b", 0) == 0
    m["a"] = 4  # storing refreshes too
    m["d"] = 5
    assert dict(m) == {"a": 4, "d": 5}
    with pytest.raises(ValueError):
        Memo(maxsize=0)


def test_measure_testbeds_returns_every_request_beyond_the_memo_bound(monkeypatch):
    """More distinct requests in one call than the memo holds: each still gets its own measurement,
    and the memo keeps only its bound (values from the disk cache, so nothing is simulated)."""
    monkeypatch.setattr(T, "_MEMO", Memo(maxsize=2))
    monkeypatch.setattr(cache, "load", lambda kind, req, default=None: ("measured", req[0]))
    reqs = [(f"testbed-{i}", False, None) for i in range(5)]
    out = T.measure_testbeds(reqs)
    assert out == [("measured", f"testbed-{i}") for i in range(5)]
    assert len(T._MEMO) == 2 and list(T._MEMO) == [(f"testbed-{i}", False, None) for i in (3, 4)]
