"""Parallel testbed measurements (issue 19): worker processes give bit-identical, order-independent
results; AIFABRIC_WORKERS and the memory guard bound the workers; shared runs are simulated once."""

from __future__ import annotations

import os
import pickle
import time

import pytest

from aifabric.errors import InputError
from aifabric.stages import workers as W
from aifabric.stages.risk import testbed as T

TINY = T.Testbed(
    leaves=2,
    hosts_per_leaf=4,
    spines=4,
    step_bytes=256 * 1024,
    incast_senders=2,
    incast_bytes=1 * 2**20,
    ring_start_us=100.0,
    buffer_bytes=8 * 2**20,
)


def _slow_square(x: int) -> tuple[int, int]:
    time.sleep(0.05 * (5 - x % 5))  # later jobs finish first: completion order != submission order
    return x * x, os.getpid()


def test_parallel_equals_serial_whatever_the_finish_order(monkeypatch):
    """Worker processes return the serial results, keyed by job, though they finish out of order."""
    jobs = list(range(10)) + [3, 4]  # duplicates are run once
    monkeypatch.setenv(W.ENV, "1")
    serial = W.run_all(_slow_square, jobs)
    monkeypatch.setenv(W.ENV, "2")
    msgs = []
    par = W.run_all(_slow_square, jobs, progress=msgs.append, label="x")
    assert {k: v[0] for k, v in par.items()} == {k: v[0] for k, v in serial.items()}
    assert len(par) == 10 and {v[1] for v in par.values()} - {os.getpid()}  # some ran elsewhere
    counted = [m for m in msgs if isinstance(m, W.Progress)]
    assert counted[-1].done == counted[-1].total == 10 and str(counted[-1]).startswith("x: 10/10")


def test_a_failing_job_raises_its_error(monkeypatch):
    monkeypatch.setenv(W.ENV, "2")
    with pytest.raises(ZeroDivisionError):
        W.run_all(_inverse, [1, 2, 0, 4])


def _inverse(x: int) -> float:
    return 1 / x


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_bad_worker_count_is_one_clear_error(monkeypatch, raw):
    monkeypatch.setenv(W.ENV, raw)
    with pytest.raises(InputError) as e:
        W.workers_for(8)
    assert "AIFABRIC_WORKERS" in str(e.value) and "whole number" in str(e.value)


def test_workers_bounded_by_jobs_cores_and_memory(monkeypatch):
    monkeypatch.delenv(W.ENV, raising=False)
    assert W.workers_for(1) == 1
    assert W.workers_for(1000) == W.cores()
    monkeypatch.setenv(W.ENV, "16")
    assert W.workers_for(4) == 4
    # the memory guard: room for 3 workers of WORKER_BYTES + the job estimate, not 16
    monkeypatch.setenv("AIFABRIC_MEMORY_LIMIT", str(int(3.5 * (W.WORKER_BYTES + 10**6) / 0.9)))
    assert W.workers_for(16, job_bytes=10**6) == 3
    monkeypatch.setenv("AIFABRIC_MEMORY_LIMIT", "1MiB")
    assert W.workers_for(16) == 1


def test_scaling_requests_share_the_runs_of_the_full_measurement():
    """The scaling check's small pod repeats runs of the full measurement: pooled, they run once."""
    full = T.runs_of(TINY, False)
    small, big = T.scaling_requests(TINY, tuple(T.measured_of(TINY, False)))
    assert set(T.runs_of(*small)) <= set(full)
    assert not set(T.runs_of(*big)) & set(full)
    assert len(full) == len(set(full))


@pytest.mark.slow
def test_testbed_measurement_is_bit_identical_in_parallel(monkeypatch):
    """A testbed measured with 2 workers pickles to the same bytes as a serial one (wall time aside)."""
    monkeypatch.setenv("AIFABRIC_CACHE", "off")
    only = ("ecn-off", "link-failure")
    out = {}
    for w in ("1", "2"):
        monkeypatch.setenv(W.ENV, w)
        T._MEMO.clear()
        d = T.measure_testbed(TINY, False, only).to_dict()
        d.pop("wall_s")
        out[w] = pickle.dumps(d)
    assert out["1"] == out["2"]


@pytest.mark.slow
def test_pooled_prefetch_serves_the_scaling_check_without_new_runs(monkeypatch):
    """risk.assess's pool (the full measurement + the scaling check's two pods) leaves nothing for
    scaling_check to simulate, and its answer equals a scaling check measured on its own."""
    monkeypatch.setenv("AIFABRIC_CACHE", "off")
    monkeypatch.setenv(W.ENV, "1")
    only = ("ecn-off",)
    T._MEMO.clear()
    alone = T.scaling_check(TINY, only)
    T._MEMO.clear()
    calls = []
    real = T.run_testbed
    monkeypatch.setattr(T, "run_testbed", lambda *a, **k: calls.append(a) or real(*a, **k))
    T.measure_testbeds([(TINY, False, only), *T.scaling_requests(TINY, T.measured_of(TINY, False, only))])
    n = len(calls)
    assert n == len(set(T.runs_of(TINY, False, only)) | set(T.runs_of(*T.scaling_requests(TINY, only)[1])))
    assert T.scaling_check(TINY, only) == alone and len(calls) == n
