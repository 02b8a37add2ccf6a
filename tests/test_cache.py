"""The measurement cache on disk: a repeated measurement is read back, not recomputed; a change of
inputs or of the simulator's code is a different key; AIFABRIC_CACHE=off always computes."""

from aifabric.stages import cache


def test_second_call_reads_the_disk(tmp_path, monkeypatch):
    """The same inputs compute once; the second call returns the stored value."""
    monkeypatch.setenv("AIFABRIC_CACHE_DIR", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"step_us": 123.5}

    assert cache.disk_cached("t", ("a", 1), compute) == {"step_us": 123.5}
    assert cache.disk_cached("t", ("a", 1), compute) == {"step_us": 123.5}
    assert len(calls) == 1
    cache.disk_cached("t", ("a", 2), compute)
    assert len(calls) == 2


def test_code_change_changes_the_key(monkeypatch):
    """A different hash of the simulator's source gives a different key for the same inputs."""
    k1 = cache.key_of("t", ("a", 1))
    monkeypatch.setattr(cache, "code_hash", lambda: "something else")
    assert cache.key_of("t", ("a", 1)) != k1


def test_off_always_computes(tmp_path, monkeypatch):
    """AIFABRIC_CACHE=off: every call computes and nothing is written."""
    monkeypatch.setenv("AIFABRIC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("AIFABRIC_CACHE", "off")
    calls = []
    for _ in range(2):
        cache.disk_cached("t", ("b",), lambda: calls.append(1) or 7)
    assert len(calls) == 2 and not any(tmp_path.rglob("*.pkl"))


def test_unreadable_entry_is_recomputed(tmp_path, monkeypatch):
    """A corrupt entry is ignored and replaced, never an error."""
    monkeypatch.setenv("AIFABRIC_CACHE_DIR", str(tmp_path))
    path = tmp_path / "t" / f"{cache.key_of('t', ('c',))}.pkl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a pickle")
    assert cache.disk_cached("t", ("c",), lambda: 42) == 42
    assert cache.disk_cached("t", ("c",), lambda: 0) == 42
