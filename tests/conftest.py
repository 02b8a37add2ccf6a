"""Suite-wide settings: the measurement cache (aifabric.stages.cache) lives in a fresh temporary
folder per test session, so a run never reuses measurements from the user's own cache or an
earlier session (inside one session it is shared, as in one user's runs, and so are the
pytest-xdist workers of one ``-n`` run)."""

import os
import tempfile


def pytest_configure(config):
    if os.environ.get("AIFABRIC_TEST_KEEP_CACHE") == "1":  # set it to reuse $AIFABRIC_CACHE_DIR on purpose
        return
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("AIFABRIC_TEST_CACHE_OWNER"):
        return  # a pytest-xdist worker shares the folder its controller made (entries are atomic)
    os.environ["AIFABRIC_CACHE_DIR"] = tempfile.mkdtemp(prefix="aifabric-test-cache-")
    os.environ["AIFABRIC_TEST_CACHE_OWNER"] = str(os.getpid())


# AIFABRIC_TEST_RSS=FILE gets one line per test, "nodeid VmRSS_kB VmHWM_kB" of the pytest process
# after it (README "Set up": which tests grow the process; scripts/rss_by_module.py sums it per module).
_RSS_FILE = os.environ.get("AIFABRIC_TEST_RSS")


def _status_kb(*keys: str) -> list[int]:
    with open("/proc/self/status") as f:
        got = {k: int(v.split()[0]) for k, _, v in (line.partition(":") for line in f) if k in keys}
    return [got.get(k, 0) for k in keys]


def _record_rss(nodeid: str, mode: str = "a") -> None:
    if _RSS_FILE:
        rss, hwm = _status_kb("VmRSS", "VmHWM")
        with open(_RSS_FILE, mode) as f:
            f.write(f"{nodeid} {rss} {hwm}\n")


def pytest_collection_finish(session):
    _record_rss("<session-start>", "w")  # the baseline (imports and collection); a fresh file


def pytest_runtest_logfinish(nodeid, location):
    _record_rss(nodeid)
