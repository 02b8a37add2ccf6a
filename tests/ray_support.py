"""A one-node Ray cluster for the Ray tests (``ray start --head --block`` on 127.0.0.1, free ports),
and a point function whose Ray worker kills itself mid-point (imported by the cluster's workers:
the head runs with this folder on its PYTHONPATH)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aifabric.sweep.commands import execute

TESTS = str(Path(__file__).resolve().parent)
SRC = str(Path(__file__).resolve().parents[1] / "src")
MARKERS = "SWEEP_TEST_MARKER_DIR"  # where killed_worker records the kills it made


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@contextlib.contextmanager
def one_cluster_at_a_time():
    """The Ray tests of every pytest process on this machine take turns (a file lock): two heads on
    one node collide on Ray's fixed default ports and fail to start or to accept a driver."""
    import fcntl

    with open(Path(tempfile.gettempdir()) / "aifabric-ray-tests.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


class RayHead:
    """``ray start --head --block`` as a child process in its own session; ``gcs`` and ``client``
    are its two addresses. :meth:`stop` signals the process this class started (and its group)."""

    def __init__(self, folder: Path) -> None:
        port, client_port = _free_ports(2)
        self.gcs, self.client = f"127.0.0.1:{port}", f"ray://127.0.0.1:{client_port}"
        self.log_path = folder / f"ray-{port}.log"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [SRC, TESTS, os.environ.get("PYTHONPATH")])),
            MARKERS: str(folder),
        }
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
             "--node-ip-address", "127.0.0.1", "--port", str(port), "--ray-client-server-port", str(client_port),
             "--num-cpus", "2", "--include-dashboard=false", "--disable-usage-stats"],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.time() + 120
        while time.time() < deadline and "--block" not in self.log_path.read_text():
            if self.proc.poll() is not None:
                self.stop()
                raise AssertionError(self.log_path.read_text()[-2000:])
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        with contextlib.suppress(ProcessLookupError):  # anything the head left in its group
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._log.close()


def killed_worker(task: dict, invoke_fn) -> dict:
    """A study point on Ray whose worker process is killed (SIGKILL, as the OOM killer would) the
    first time it runs the 128-GPU ib ring point, and every time it runs the 64-GPU roce tree
    point; every other point runs as usual."""
    sc, folder = task["scenario"], Path(os.environ[MARKERS])
    key = (sc.get("gpus"), sc.get("technology"), sc.get("algorithm"))
    marker = folder / "killed-once"
    if key == (128, "ib", "ring") and not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    if key == (64, "roce", "tree"):
        os.kill(os.getpid(), signal.SIGKILL)
    return execute(task, invoke_fn)
