"""``aifabric validate --symmetry``: the main job run on a mirror (issue 25).

For each job of :data:`JOBS` and each fabric family (InfiniBand, RoCE, Ultra Ethernet: the ``uec-*``
design at the job's NIC rate), the pipeline compares a design
with its **twin** — the same design under another key (``…-mirror``): identical physics, parts, prices
and tuning. Every stage must treat the two alike, so the check holds when

* their iteration times (or, without a training step, their communication slowdowns) agree within
  :data:`ITERATION_TOL` (0.5 %),
* their expected losses agree within :data:`LOSS_TOL` (0.5 points), and
* the verdict is ``no material difference`` (a tie is not a win for whichever design is listed first).

Any asymmetry it finds is a bug (a stage keyed on a design's name or position), not a tolerance to
widen. What a mirror cannot test: differences between the two technologies' physics (credits vs PFC),
which are modelled on purpose and listed in the assumption register with their sources.

:func:`risk_coverage` is the symmetric ask of the risk library: every scenario, on each family's risk
testbed, is either measured or not applicable with the reason, and every fabric-specific scenario names
its counterpart on the other families (:data:`COUNTERPARTS`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

ITERATION_TOL = 0.005
LOSS_TOL = 0.005
# (name, advisor keys, slow): the six jobs the issue names — dense, 405B, MoE, inference, 64 and
# 16,384 GPUs (the last runs in the slow test group)
JOBS: tuple[tuple[str, dict, bool], ...] = (
    ("dense-1024", {"gpus": 1024, "gpu": "h100", "workload": "training", "model": "llama3.1-70b"}, False),
    ("405b-2048", {"gpus": 2048, "gpu": "h100", "workload": "training", "model": "llama3.1-405b"}, False),
    ("moe-2048", {"gpus": 2048, "gpu": "h100", "workload": "training", "model": "deepseek-v3"}, False),
    (
        "inference-wide-ep",
        {"gpus": 256, "gpu": "h100", "workload": "inference", "model": "deepseek-v3"},
        False,
    ),
    ("small-64", {"gpus": 64, "gpu": "h100", "workload": "training", "model": "llama3-8b"}, False),
    ("large-16384", {"gpus": 16384, "gpu": "h100", "workload": "training", "model": "llama3.1-405b"}, True),
)
FAMILIES = ("infiniband", "roce", "uet")
# the named design each family's mirror runs when it is not one of compare's two default fabrics
FAMILY_DESIGN = {"uet": {400: "uec-400g", 800: "uec-800g"}}
# each fabric-specific risk scenario and what stands for it on the other families (the symmetric ask)
COUNTERPARTS = {
    "ecn-off": {"infiniband": "ib-cc-off", "uet": "uet-nscc-off"},
    "ib-cc-off": {"roce": "ecn-off", "uet": "uet-nscc-off"},
    "uet-nscc-off": {"roce": "ecn-off", "infiniband": "ib-cc-off"},
    "dcqcn-defaults": {"infiniband": "ib-cc-off (no tunable public CC table)", "uet": "uet-nscc-misset"},
    "uet-nscc-misset": {"roce": "dcqcn-defaults", "infiniband": "ib-cc-off (no tunable public CC table)"},
    "ib-no-ar": {"roce": "adaptive-routing-off (flow model)", "uet": "uet-spraying-off"},
    "uet-spraying-off": {"roce": "adaptive-routing-off (flow model)", "infiniband": "ib-no-ar"},
    "ecmp-polarisation": {
        "infiniband": "none: no hashing",
        "uet": "uet-spraying-off (hashing of entropy values)",
    },
    "lossy-class": {"infiniband": "none: credits, no lossy class", "uet": "uet-trimming-off"},
    "lossy-go-back-n": {"infiniband": "none: credits, no lossy class", "uet": "uet-trimming-off"},
    "uet-trimming-off": {"roce": "lossy-go-back-n", "infiniband": "none: credits, no drops"},
    "uet-roce-fallback": {"roce": "none: already RoCE", "infiniband": "none: one transport"},
    "uet-llr-off": {
        "roce": "none: not measured on any fabric (fabric.link_errors runs on RoCE too)",
        "infiniband": "none: not measured on any fabric (fabric.link_errors, NVIDIA LLR, runs on IB too)",
    },
    "pfc-threshold-mismatch": {"infiniband": "none: credits", "uet": "only with a lossless class"},
    "pfc-storm": {"infiniband": "none: credits", "uet": "only with a lossless class"},
    "pfc-watchdog-off": {"infiniband": "stuck-receiver (HOQ lifetime)", "uet": "only with a lossless class"},
}


@dataclass(frozen=True)
class MirrorCheck:
    job: str
    family: str
    designs: tuple[str, str]
    iteration: tuple[float | None, float | None]
    expected_loss: tuple[float, float]
    verdict: str
    probability_best: dict
    wall_s: float

    @property
    def iteration_gap(self) -> float:
        a, b = self.iteration
        if a is None or b is None:
            return 0.0 if a == b else float("inf")
        return abs(b / a - 1)

    @property
    def loss_gap(self) -> float:
        return abs(self.expected_loss[0] - self.expected_loss[1])

    @property
    def holds(self) -> bool:
        return (
            self.iteration_gap <= ITERATION_TOL
            and self.loss_gap <= LOSS_TOL
            and self.verdict == "no material difference"
        )

    def to_dict(self) -> dict:
        return {
            "job": self.job,
            "family": self.family,
            "designs": list(self.designs),
            "iteration_s": list(self.iteration),
            "iteration_gap": self.iteration_gap,
            "expected_loss": list(self.expected_loss),
            "loss_gap": self.loss_gap,
            "verdict": self.verdict,
            "probability_best": self.probability_best,
            "holds": self.holds,
            "wall_s": self.wall_s,
        }


def mirror_check(job: str, advisor: dict, family: str, seed: int = 1) -> MirrorCheck:
    """One job on one family's mirror (module docstring)."""
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import AdvisorSpec
    from aifabric.stages.pipeline import CompareInputs, run

    t0 = time.perf_counter()
    cat = load_catalog(None)
    if family in FAMILY_DESIGN:
        from aifabric.stages.design import nic_rate_for

        rate = int(nic_rate_for(cat.get("gpu", advisor.get("gpu", "h100")))[0])
        advisor = {**advisor, "designs": [FAMILY_DESIGN[family][rate]]}
    c = run(CompareInputs(AdvisorSpec(**advisor), cat, seed, mirror=family))
    a, b = c.design.fabrics
    ev = c.decision.evidence
    it = []
    for fd in (a, b):
        fp = c.performance.fabric(fd.key)
        if fp.iteration is not None:
            it.append(fp.iteration.iteration_s)
        elif fp.inference is not None:
            it.append(fp.inference["itl_s"])
        else:
            it.append(None)
    return MirrorCheck(
        job,
        family,
        (ev[a.key].design, ev[b.key].design),
        (it[0], it[1]),
        (c.risk.fabric(a.key).expected_loss, c.risk.fabric(b.key).expected_loss),
        c.decision.recommendation.verdict,
        dict(c.decision.probability_best),
        time.perf_counter() - t0,
    )


def risk_coverage() -> dict[str, dict]:
    """Per risk scenario: on each family's risk testbed (a two-tier pod at 400G, the family's default
    congestion control), ``measured`` or the reason it does not apply; and its counterparts on the other
    families (:data:`COUNTERPARTS`). A fabric-specific scenario without counterparts is a gap."""
    from aifabric.stages.risk.testbed import LIBRARY, testbed_for

    beds = {
        fam: testbed_for(400, None, 600, 40, "ecmp" if fam != "infiniband" else "adaptive", technology=fam)
        for fam in FAMILIES
    }
    out = {}
    for sid, trig in LIBRARY.items():
        on = {}
        for fam, tb in beds.items():
            ok, why = trig.applies(tb)
            on[fam] = "measured" if ok else why
        out[sid] = {"on": on, "counterparts": COUNTERPARTS.get(sid, {})}
    return out


def coverage_gaps(coverage: dict[str, dict]) -> list[str]:
    """``scenario on family`` wherever a scenario of another family's library is neither asked of this
    family (measured, or not applicable with a reason) nor given a counterpart here."""
    from aifabric.stages.risk.testbed import LIBRARY

    gaps = []
    for sid, row in coverage.items():
        for fam, state in row["on"].items():
            own = fam in LIBRARY[sid].fabrics
            if not own and fam not in row["counterparts"]:
                gaps.append(f"{sid} on {fam}")
            elif own and state != "measured" and not state:
                gaps.append(f"{sid} on {fam} (no reason given)")
    return gaps


def symmetry(include_slow: bool = True, progress=None) -> list[MirrorCheck]:
    """Every job × family mirror of :data:`JOBS` (the 16,384-GPU job only with ``include_slow``)."""
    out = []
    for name, adv, slow in JOBS:
        if slow and not include_slow:
            continue
        for fam in FAMILIES:
            if progress:
                progress(f"mirror {name} / {fam}")
            out.append(mirror_check(name, adv, fam))
    return out


__all__ = [
    "COUNTERPARTS",
    "coverage_gaps",
    "risk_coverage",
    "FAMILIES",
    "ITERATION_TOL",
    "JOBS",
    "LOSS_TOL",
    "MirrorCheck",
    "mirror_check",
    "symmetry",
]
