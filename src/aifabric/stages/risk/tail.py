"""The tail-latency distribution of the collective step on the risk testbed (issue 15: ``--workload
trading`` and high jitter sensitivity). Split out of :mod:`aifabric.stages.risk.testbed`, which still
offers these names."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from aifabric.stages.risk.testbed import CONGESTION_SHARE, TRAFFIC, Testbed, run_testbed

# The tail-latency distribution of the collective step (issue 15, --workload trading / high jitter
# sensitivity): the baseline ring step on the packet engine over this many seeds per traffic mix. The
# seed moves ECMP hashing and the engine's per-packet adaptive choices; 16 seeds x 2 mixes = 32 runs
# per fabric (about 0.2 s each on the default pod), cached on disk.
STEP_SEEDS = tuple(range(1, 17))


@dataclass(frozen=True)
class StepDistribution:
    """The baseline ring step's completion time (us) on the packet engine, per seed, on a quiet and
    on a congested fabric (the step ``ring_start_us`` into the storage incast)."""

    quiet_us: tuple[float, ...]
    congested_us: tuple[float, ...]

    def quantile(self, q: float, congestion_share: float = CONGESTION_SHARE) -> float:
        """The ``q`` quantile of the step time when a share ``congestion_share`` of the steps runs
        congested (each seed's run weighs equally within its mix; inverted-CDF, no interpolation)."""
        t = np.array(self.quiet_us + self.congested_us, dtype=float)
        w = np.array(
            [(1 - congestion_share) / len(self.quiet_us)] * len(self.quiet_us)
            + [congestion_share / len(self.congested_us)] * len(self.congested_us)
        )
        keep = w > 0
        t, w = t[keep], w[keep]
        order = np.argsort(t, kind="stable")
        cum = np.cumsum(w[order]) / w.sum()
        return float(t[order][min(len(t) - 1, int(np.searchsorted(cum, q - 1e-12)))])

    def to_dict(self, congestion_share: float = CONGESTION_SHARE) -> dict:
        return {
            "quiet_us": list(self.quiet_us),
            "congested_us": list(self.congested_us),
            "p50_us": self.quantile(0.5, congestion_share),
            "p99_us": self.quantile(0.99, congestion_share),
            "congestion_share": congestion_share,
            "runs": len(self.quiet_us) + len(self.congested_us),
        }


def step_distribution(tb: Testbed, seeds: tuple[int, ...] = STEP_SEEDS) -> StepDistribution:
    """The baseline ring step over ``seeds`` on quiet and congested traffic (packet engine), cached in
    the process and on disk (:mod:`aifabric.stages.cache`)."""
    return _step_distribution(replace(tb, seeds=tuple(seeds)))


@lru_cache(maxsize=16)
def _step_distribution(tb: Testbed) -> StepDistribution:
    from aifabric.stages.cache import disk_cached

    def compute() -> StepDistribution:
        runs = {t: tuple(run_testbed(tb, None, t, s).step_us for s in tb.seeds) for t in TRAFFIC}
        return StepDistribution(runs["quiet"], runs["congested"])

    return disk_cached("step-distribution", tb, compute)
