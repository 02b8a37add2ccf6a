"""The *risk* stage's "adaptive routing off" mistake, measured the same way on every fabric: a design
that relies on adaptive routing (a switch setting a team can fail to enable or keep) runs the
routing its switches fall back to (:data:`AR_OFF_ROUTING`); the job's patterns, placed as the job
is (ring step, permutation, pipeline sends, expert all-to-all), are re-measured with it in the flow
model and sent through *performance* with the layout chosen on the healthy fabric."""

from __future__ import annotations

from aifabric.stages.design.fabrics import is_adaptive
from aifabric.stages.performance import iteration_slowdown

ADAPTIVE_OFF = "adaptive-routing-off"
ADAPTIVE_OFF_WHAT = (
    "adaptive routing off: the routing the fabric falls back to (ECMP hashing on RoCE, the subnet "
    "manager's static forwarding tables on InfiniBand) on the job's placed patterns (flow model)"
)
# The routing a fabric runs when its adaptive routing is off (not enabled, or lost on an upgrade):
# an Ethernet switch hashes each flow's 5-tuple over the equal-cost ports (ECMP; the RoCEv2 UDP source
# port differs per QP); an InfiniBand switch forwards by the destination LID through the linear
# forwarding table the subnet manager programmed (OpenSM's routing engines without AR: minhop / updn /
# ftree, destination-based D-mod-k on a fat tree; the flow model's ``static``,
# aifabric.topology.routing.ib_linear_forwarding). IB switches have no 5-tuple hash.
AR_OFF_ROUTING = {"roce": "ecmp", "infiniband": "static"}


def adaptive_off_applies(fd, fp, has_network: bool) -> bool:
    """Whether the fabric relies on adaptive routing (a switch setting a team can fail to enable or
    keep) for a job whose step the model times — the same rule for every technology. A scheduled
    fabric's spraying is not a switch setting."""
    timed = fp.iteration is not None or (fp.inference is not None and fp.uses_backend)
    return bool(has_network and timed and is_adaptive(fd.routing) and fd.routing != "scheduled")


def _decode_efficiency(net) -> float:
    """The efficiency of what a decode step sends over the network: the expert all-to-all's, else the
    pipeline sends', else the permutation's (KV-cache transfer)."""
    for e in (net.ep_a2a_efficiency, net.pp_efficiency, net.permutation_efficiency):
        if e is not None:
            return e
    return 1.0


def adaptive_off_slowdown(fd, workload, gpu, seed: int, net, fp) -> tuple[str, float | None, float]:
    """(fallback routing, ring-step (or decode traffic) slowdown, iteration (or decode step) slowdown)
    of the fabric ``fd`` whose healthy measurement is ``net`` and performance ``fp``."""
    from aifabric.stages.measure.network import measure_fabric

    route = AR_OFF_ROUTING[fd.technology]
    off = measure_fabric(fd, workload, gpu, seed, routing=route, sweep=False)
    if fp.iteration is not None:
        e_off = off.ring_step_efficiency
        comm = net.ring_step_efficiency / e_off - 1 if e_off else None
        return route, comm, iteration_slowdown(workload, fp, off)
    comm = _decode_efficiency(net) / max(_decode_efficiency(off), 1e-12) - 1
    return route, comm, fp.decode_slowdown(comm)


__all__ = [
    "ADAPTIVE_OFF",
    "ADAPTIVE_OFF_WHAT",
    "AR_OFF_ROUTING",
    "adaptive_off_applies",
    "adaptive_off_slowdown",
]
