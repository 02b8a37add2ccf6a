"""Switch-to-leaf hop distances for :class:`aifabric.flow.paths.PathModel` (issue 19: flow mode at
100,000 GPUs).

One breadth-first search per attachment switch (leaf) over the switch graph in compressed sparse
row form, in a numba kernel: O(leaves × (switches + switch links)) time and no temporaries beyond
the queue. It gives exactly the table the earlier vectorised level-synchronous BFS gave (the
same hop counts, :data:`FAR` where a leaf is unreachable), whose (edges × leaves) frontier
matrices made a 100k-GPU three-tier fabric take 69 s (1,568 leaves × ~600k directed edges × 5
levels) where this takes about a second.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SOURCES = [Path(__file__).with_name("_bfs_jit.py")]


def _kernel():
    """The BFS kernel: its ahead-of-time build when one matches ``_bfs_jit.py``, else numba's JIT."""
    from aifabric.flow import _aot

    mod = _aot.load("bfs", SOURCES)
    if mod is not None:
        return mod.bfs_all
    from aifabric.flow._bfs_jit import _bfs_all

    return _bfs_all


def leaf_distances(
    num_switches: int,
    src: np.ndarray,
    dst: np.ndarray,
    att_sw: np.ndarray,
    far: int,
    leaf_major: bool = False,
) -> np.ndarray:
    """``dist[s, a]``: hops from switch ``s`` to attachment switch ``att_sw[a]`` (switch indices)
    over the directed switch edges ``src[i] → dst[i]`` (both directions listed for a link);
    ``far`` where unreachable. int32, shape ``(num_switches, len(att_sw))`` — or, with
    ``leaf_major``, the same table as the kernel writes it, ``(len(att_sw), num_switches)``."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(num_switches + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=num_switches)[:num_switches], out=indptr[1:])
    # BFS from the leaf outwards over reversed edges (v reaches the leaf through u when v → u);
    # the switch graph lists both directions of every link, so the edge set is its own reverse
    indices = np.ascontiguousarray(dst[order])
    dist_t = np.empty((len(att_sw), num_switches), dtype=np.int32)
    if num_switches and len(att_sw):
        _kernel()(indptr, indices, np.asarray(att_sw, dtype=np.int64), dist_t, np.int32(far))
    return dist_t if leaf_major else np.ascontiguousarray(dist_t.T)


__all__ = ["leaf_distances"]
