"""Suite-wide settings: the measurement cache (aifabric.stages.cache) lives in a fresh temporary
folder per test session, so a run never reuses measurements from the user's own cache or an
earlier session (inside one session it is shared, as in one user's runs)."""

import os
import tempfile


def pytest_configure(config):
    if os.environ.get("AIFABRIC_TEST_KEEP_CACHE") != "1":  # set it to reuse $AIFABRIC_CACHE_DIR on purpose
        os.environ["AIFABRIC_CACHE_DIR"] = tempfile.mkdtemp(prefix="aifabric-test-cache-")
