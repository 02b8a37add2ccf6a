"""Seeded random draws shared by the packet engine's and the flow model's traffic generators.

:func:`derangement` is the permutation workload's destination draw: uniform over derangements
(nobody sends to itself; two hosts swap), in bounded time for every seed.
"""

from __future__ import annotations

import numpy as np

MAX_DRAWS = 256


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random derangement of ``range(n)`` (``perm[i] != i`` for every ``i``), n ≥ 2.

    Rejection sampling: ``rng.permutation(n)`` until one has no fixed point. A random permutation
    is a derangement with probability → 1/e (1/2 for n = 2, 1/3 for n = 3), so this takes about
    2.7 draws; every accepted draw is equally likely, so the result is uniform. Time is bounded:
    after :data:`MAX_DRAWS` rejected draws (probability below 10^-50 for any n ≥ 2) the last draw's
    fixed points are rotated among themselves (or, if there is one, swapped with the next index),
    which leaves none. For n < 2 there is no derangement: the identity is returned and the caller
    rejects the self-flow."""
    ident = np.arange(n)
    if n < 2:
        return ident
    perm = ident
    for _ in range(MAX_DRAWS):
        perm = rng.permutation(n)
        if not (perm == ident).any():
            return perm
    fixed = np.flatnonzero(perm == ident)  # pragma: no cover - probability < 1e-50
    if len(fixed) >= 2:
        perm[fixed] = perm[np.roll(fixed, 1)]
    else:
        f = int(fixed[0])
        j = (f + 1) % n
        perm[f], perm[j] = perm[j], perm[f]
    return perm
