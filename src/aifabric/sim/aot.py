"""The packet kernel ahead of time (issue 19): :func:`kernel` is what the engine calls, and
``python -m aifabric.sim.aot`` builds it.

:func:`kernel` returns :mod:`aifabric.sim.kernel` (numba's JIT) unless an ahead-of-time build of
that very ``kernel.py`` exists (:mod:`aifabric.flow._aot`: keyed by the source's bytes and the
Python / numpy / numba versions); then it returns a namespace with the build's ``run`` and the
kernel module's table-layout constants (``PT_*``, ``FL_*``, ``G_*``, ``ST_*``, …) as saved at build
time, so a run never imports numba. Building compiles ``kernel.run`` and the path model's BFS
(:mod:`aifabric.flow._bfs_jit`) with ``numba.pycc`` into C extensions next to numba's own cache
(``__pycache__``, or ``AIFABRIC_AOT_DIR``): 20 s to 2.5 minutes on 2 cores. ``AIFABRIC_AOT=0`` ignores a build.

    python -m aifabric.sim.aot          # build (or say that the build is current)
    python -m aifabric.sim.aot --check  # exit 0 when a current build exists, 1 when not
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

from aifabric.flow import _aot
from aifabric.sim.aot_load import (  # noqa: F401  (re-exported: the loader's public names)
    SOURCES,
    _constants_path,
    kernel,
    run_or_jit,
    uses_aot,
)


def _run_signature():
    """``run``'s pycc signature: numba's types of a small scenario's kernel arguments (the engine's
    own tables, so an argument added to the kernel is picked up), returning the status (int64)."""
    import numpy as np
    import pandas as pd
    from numba import typeof
    from numba import types as nt

    from aifabric.scenario import scenario_from_dict
    from aifabric.sim import engine
    from aifabric.topology import from_spec

    sc = scenario_from_dict(
        {
            "name": "aot-signature",
            "topology": {"kind": "star", "hosts": 3, "link_rate": "100Gbps", "link_delay": "1us"},
            "workload": {"kind": "incast", "senders": 2, "receiver": 0, "flow_size": "8KB"},
            "sim": {"until": "1ms"},
        }
    )
    topo = from_spec(sc.topology)
    h = [int(x) for x in topo.hosts]
    flows = pd.DataFrame(
        {"id": [0, 1], "src": h[1:3], "dst": [h[0], h[0]], "size_bytes": [8000, 8000], "start_ps": [0, 0]}
    )
    st = engine.compile_scenario(sc, topo, flows)
    args = [*st.kernel_args(), np.int64(0), np.int64(0)]
    return nt.int64(*[typeof(a) for a in args])


def _compile(stem: str, sources: list[Path], exports: dict) -> Path:
    import warnings

    from numba.pycc import CC

    out = _aot.artifact(stem, sources)
    out.parent.mkdir(parents=True, exist_ok=True)
    # built in a scratch folder and moved into place in one step: a process starting meanwhile
    # sees no build or a whole one, never a half-written file
    with warnings.catch_warnings(), tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        warnings.simplefilter("ignore")  # numba.pycc's deprecation notice
        cc = CC(out.name.split(".")[0])
        cc.output_dir = tmp
        cc.verbose = False
        for name, (fn, sig) in exports.items():
            cc.export(name, sig)(fn)
        cc.compile()
        os.replace(Path(tmp) / out.name, out)
    return out


def build(force: bool = False, echo=print) -> list[Path]:
    """Build the ahead-of-time kernels that are missing or stale; their paths."""
    from aifabric.flow import _bfs, _bfs_jit
    from aifabric.sim import kernel as K

    done = []
    bfs = _aot.artifact("bfs", _bfs.SOURCES)
    if force or not bfs.exists():
        t = time.perf_counter()
        _compile("bfs", _bfs.SOURCES, {"bfs_all": (_bfs_jit._bfs_all.py_func, _bfs_jit.SIGNATURE)})
        echo(f"built {bfs} ({time.perf_counter() - t:.0f} s)")
    done.append(bfs)
    run = _aot.artifact("kernel", SOURCES)
    if force or not run.exists() or not _constants_path().exists():
        t = time.perf_counter()
        constants = {n: v for n, v in vars(K).items() if n.isupper() and type(v) is int}
        tmp = _constants_path().with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(constants))
        os.replace(tmp, _constants_path())  # before the extension: a build is whole when it exists
        _compile("kernel", SOURCES, {"run": (K.run.py_func, _run_signature())})
        echo(f"built {run} ({time.perf_counter() - t:.0f} s)")
    done.append(run)
    kernel.cache_clear()
    return done


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m aifabric.sim.aot", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 0 when a current build exists, else 1")
    ap.add_argument("--force", action="store_true", help="rebuild even when current")
    a = ap.parse_args(argv)
    from aifabric.flow import _bfs

    current = _aot.artifact("bfs", _bfs.SOURCES).exists() and _constants_path().exists()
    current = current and _aot.artifact("kernel", SOURCES).exists()
    if a.check:
        print("current" if current else "not built for these sources")
        return 0 if current else 1
    if current and not a.force:
        print(f"current: {_aot.artifact('kernel', SOURCES).parent}")
        return 0
    print("building the ahead-of-time kernels (numba.pycc; under a minute to a few)", file=sys.stderr)
    build(force=a.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
