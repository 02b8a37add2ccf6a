"""Stage 5 — *risk*: every failure and misconfiguration scenario of the library
(:data:`aifabric.stages.risk.testbed.LIBRARY`) that applies to a fabric, measured on the packet-level
testbed derived from that fabric, sent through *performance* again, weighted by how often it
happens and how long it lasts; plus the goodput lost to job interruptions.

Per scenario *i* (one :class:`RiskItem`):

* **slowdown** sᵢ — the testbed's ring-step slowdown under the scenario (time-averaged over quiet
  and congested traffic with the congestion share), turned into the fabric's measurement under it
  (:meth:`~aifabric.stages.measure.network.FabricNetwork.with_slowdown`) and sent through *performance*:
  the iteration slowdown (the communication slowdown where there is no training iteration). A
  ring that does not finish (a hang) is sᵢ = ∞;
* **lost share while present** ℓᵢ = 1 − 1/(1 + sᵢ) (0 ≤ ℓᵢ ≤ 1);
* **probability** pᵢ — for a configuration mistake, the chance it is in the deployment (by the
  team's expertise); for a fault, 1 (its frequency is in dᵢ);
* **persistence** dᵢ — the share of the year it is present: a mistake until someone finds it (time
  to find, by expertise; shorter with the audit in CI); a fault, events per year (a rate per 1,000
  components counted from the bill of materials) × time to repair / one year.

Expected loss of the scenario pᵢ·dᵢ·ℓᵢ; of the fabric 1 − Πᵢ(1 − pᵢ·dᵢ·ℓᵢ), which cannot exceed 1
(:func:`combine`); a range from the low and high ends of pᵢ and dᵢ. ``by_scenario`` splits the total
in proportion to pᵢ·dᵢ·ℓᵢ, so its values add up to the total (the *decide* stage sums them).

**Goodput** (:func:`interruptions`): NIC faults, host-link and leaf faults of single-homed NICs,
and fabric-link and spine / core faults whose detection + re-route outlasts NCCL's retry budget stop
the synchronous job (:func:`interruption_events`, the same rule on both fabrics); each costs
detection + restart + the work since the last checkpoint on every GPU. It is the
``job-interruptions`` item of the list (pᵢ = 1, ℓᵢ = 1) and ``goodput_loss`` of the fabric.

Every rate and duration is in :data:`RATES` with its source, or marked as an assumption with a
range; the user overrides any of them in the scenario file's ``risk:`` section (:class:`RiskSpec`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aifabric.scenario import RiskSpec
from aifabric.stages.performance import iteration_slowdown
from aifabric.stages.risk import testbed as T
from aifabric.stages.risk.adaptive import (  # noqa: F401  (re-exported)
    ADAPTIVE_OFF,
    ADAPTIVE_OFF_WHAT,
    AR_OFF_ROUTING,
    adaptive_off_applies,
    adaptive_off_slowdown,
)
from aifabric.stages.risk.interruptions import (  # noqa: F401  (re-exported)
    _components,
    _routing_kind,
    interruption_events,
    interruptions,
)
from aifabric.stages.risk.item import (  # noqa: F401  (re-exported)
    _KIND_OF_TRIGGER,
    RISK_KINDS,
    RiskItem,
    combine,
    lost_share,
)
from aifabric.stages.risk.library import LOSSY_P_D, DesignView
from aifabric.stages.risk.rates import (  # noqa: F401  (re-exported: the stage's public names)
    DAYS_TO_FIND,
    DAYS_TO_FIND_AUDIT,
    HOURS_PER_YEAR,
    INTERRUPT_BASIS,
    INTERRUPT_HOURS,
    LINK_FAULTS,
    LINK_FAULTS_PER_1000_YEAR,
    LLAMA3,
    MISCONFIG_PROBABILITY,
    MISCONFIG_PROBABILITY_BASIS,
    MISCONFIG_RANGE,
    MISTAKE_RATE,
    NCCL_RETRY_BUDGET_S,
    NIC_FAULTS,
    NIC_FAULTS_PER_1000_YEAR,
    RATES,
    RECONVERGE_S,
    REROUTE_S,
    SWITCH_FAULTS_PER_1000_YEAR,
    Rate,
    failure_assumptions,
)
from aifabric.stages.risk.redundancy import SWITCH_REPAIR_HOURS, switch_failures
from aifabric.stages.risk.testbed import (
    CONGESTION_SHARE,
    LIBRARY,
    SMALL_JITTER_DUTY,
    RiskMeasurement,
    Testbed,
    measure_testbed,
    placed_testbed,
    scaling_check,
    testbed_for,
)


@dataclass(frozen=True)
class FabricRisk:
    key: str
    items: tuple[RiskItem, ...] = ()
    testbed: RiskMeasurement | None = field(default=None, repr=False, compare=False)
    goodput_loss: float = 0.0
    goodput_detail: dict = field(default_factory=dict, compare=False)

    @property
    def by_scenario(self) -> dict[str, float]:
        return {r.scenario: r.expected_loss for r in self.items}

    @property
    def expected_loss(self) -> float:
        return combine(r.own_loss for r in self.items)

    @property
    def expected_loss_range(self) -> tuple[float, float]:
        return combine(r.own_loss_range[0] for r in self.items), combine(
            r.own_loss_range[1] for r in self.items
        )

    def rows(self) -> list[dict]:
        return [r.row() for r in self.items]

    def to_dict(self) -> dict:
        return {
            "fabric": self.key,
            "expected_loss": self.expected_loss,
            "expected_loss_range": list(self.expected_loss_range),
            "goodput_loss": self.goodput_loss,
            "goodput": self.goodput_detail,
            "scenarios": {r.scenario: r.detail() for r in self.items},
            "testbed": self.testbed.to_dict() if self.testbed else None,
        }


@dataclass(frozen=True)
class RiskEvidence:
    expertise: str
    probability: float
    congestion_share: float
    fabrics: tuple[FabricRisk, ...]
    jitter: dict | None = None  # the jitter claim's numbers (duty × share of links → slowdown)
    # the congested traffic mix is the storage incast: its share of time moves with the storage share
    # (one setting); False when the user set --congestion-share apart from it
    congestion_is_storage: bool = True
    storage_on_fabric: bool = False  # the deployment's storage placement (the tail check reads it)

    def fabric(self, key: str) -> FabricRisk | None:
        return next((f for f in self.fabrics if f.key == key), None)

    def to_dict(self) -> dict:
        return {
            "team_expertise": self.expertise,
            "probability_per_setting": self.probability,
            "probability_basis": MISCONFIG_PROBABILITY_BASIS,
            "congestion_share": self.congestion_share,
            "combination": "expected loss = 1 - prod(1 - p d l), l = 1 - 1/(1 + s)",
            "fabrics": [f.to_dict() for f in self.fabrics],
            "jitter": self.jitter,
            "congestion_is_storage": self.congestion_is_storage,
        }


def _slowdown(workload, perf, network, comm_slowdown: float, extra: bool = False) -> float:
    """Iteration slowdown when the fabric measures ``comm_slowdown`` slower on bandwidth-bound
    steps; inference: the decode step's; otherwise the communication slowdown itself (∞ stays ∞).
    ``extra``: ``comm_slowdown`` is the testbed's added time in units of the ideal step
    (:func:`aifabric.stages.risk.testbed._rel`), applied on top of the fabric's measured step
    (:meth:`~aifabric.stages.measure.network.FabricNetwork.with_extra_time`)."""
    if extra and comm_slowdown != float("inf") and (perf.inference is not None or perf.iteration is None):
        # no step model: the relative slowdown of a step that took 1/e ideal steps
        comm_slowdown = comm_slowdown * min(1.0, network.ring_step_efficiency or 1.0)
    if perf.inference is not None:
        return perf.decode_slowdown(comm_slowdown)
    if comm_slowdown == float("inf") or perf.iteration is None:
        return comm_slowdown
    net = network.with_extra_time(comm_slowdown) if extra else network.with_slowdown(comm_slowdown)
    return iteration_slowdown(workload, perf, net)


def _p_d(
    sid: str, kind: str, plan: dict, expertise: str, spec: RiskSpec
) -> tuple[float, float, float, float, float, float, str]:
    """(p, p_low, p_high, d, d_low, d_high, basis) for scenario ``sid``."""
    r = RATES.get(sid, MISTAKE_RATE)
    p_m = spec.probability.get(sid) if r.kind == "mistake" else None
    pm, (pl, ph) = MISCONFIG_PROBABILITY[expertise], MISCONFIG_RANGE[expertise]
    days = DAYS_TO_FIND_AUDIT if spec.audit_in_ci else DAYS_TO_FIND[expertise]
    find = tuple(x / 365 for x in days)
    if r.kind == "mistake":
        if sid in RATES:  # a fault found like a mistake (firmware bug): its own probability
            pm, pl, ph = r.value, r.low, r.high
        if p_m is not None:
            pm = pl = ph = p_m
        return pm, pl, ph, find[0], find[1], find[2], r.basis
    if r.kind == "share":
        v = spec.probability.get(sid, r.value)
        lo, hi = (v, v) if sid in spec.probability else (r.low, r.high)
        return 1.0, 1.0, 1.0, v, lo, hi, r.basis
    n = _components(plan, r.components)
    rate = spec.probability.get(sid, r.value)
    rlo, rhi = (rate, rate) if sid in spec.probability else (r.low, r.high)
    h = spec.hours.get(sid)
    hm, hl, hh = (h, h, h) if h is not None else r.hours
    d = n / 1000 * rate * hm / HOURS_PER_YEAR
    dl, dh = n / 1000 * rlo * hl / HOURS_PER_YEAR, n / 1000 * rhi * hh / HOURS_PER_YEAR
    basis = f"{r.basis}; {n:,} {r.components} in the plan"
    if sid == "pfc-watchdog-off":  # the fault happens and the watchdog is off (a mistake)
        return pm, pl, ph, d, dl, dh, basis
    return 1.0, 1.0, 1.0, d, dl, dh, basis


def _jitter(rm: RiskMeasurement, workload, perf, network) -> dict:
    """The seed's jitter story: ring-step slowdown for PAUSE duty × share of host links, each mapped
    to the iteration; the smallest duty that costs 20 % (communication-bound, and this iteration)."""
    sweep = []
    for r in rm.jitter_sweep:
        s = max(0.0, r["comm_slowdown"])
        sweep.append({**r, "slowdown": _slowdown(workload, perf, network, s, extra=True)})
    storm = rm.comm_slowdown["quiet"].get("pfc-storm")  # one spine paused SMALL_JITTER_DUTY of the time
    small = (
        {
            "duty": SMALL_JITTER_DUTY,
            "comm_slowdown": storm,
            "slowdown": _slowdown(workload, perf, network, max(0.0, storm), extra=True),
        }
        if storm is not None
        else None
    )
    order = sorted(sweep, key=lambda r: (r["duty"], r["share"]))
    need = next((r for r in order if r["comm_slowdown"] >= 0.2), None)
    need_it = next((r for r in order if r["slowdown"] >= 0.2), None)
    return {
        "sweep": sweep,
        "small": small,
        "duty_for_20pct": need_it["duty"] if need_it else None,
        "for_20pct_communication": {k: need[k] for k in ("duty", "share", "burst_us")} if need else None,
        "slowdown_of": "training iteration" if perf.iteration is not None else "network communication",
        "how": "PAUSE bursts (2 or 20 us) at the duty on a share of the ring's receiving NICs, each with its own "
        "phase; the synchronous step waits for the slowest rank (straggler amplification)",
    }


def testbed_of(fd, spec: RiskSpec | None = None, placement=None, tuning: str = "as-shipped") -> Testbed:
    """The testbed derived from one planned fabric (:func:`aifabric.stages.risk.testbed.testbed_for`),
    its ring placed as the job is (``placement``: :class:`aifabric.workload.placement.Placement`),
    its congestion control the tuning state's for this fabric
    (:func:`aifabric.stages.deployment.baseline_for`) unless the risk: section names one."""
    from aifabric.stages.deployment import baseline_for

    spec = spec or RiskSpec()
    plan = fd.plan.to_dict()
    base = spec.roce_baseline if fd.technology == "roce" else spec.ib_congestion_control
    if base is None:
        base = baseline_for(tuning, fd.technology, getattr(fd, "preset", "") or "")
    tb = testbed_for(
        fd.nic_rate_gbps,
        fd.switch_buffer_bytes,
        fd.switch_hop_ns,
        fd.lengths_m["leaf-spine"],
        fd.routing,
        technology=fd.technology,
        baseline=base,
        # dual-ToR legs are not modelled on the testbed: its NIC runs at the full rate on the radix of it
        radix=int(plan.get("radix") or 64) // int(plan.get("legs_per_nic") or 1),
        oversubscription=float(plan.get("oversubscription") or 1.0),
        tiers=int(plan.get("tiers") or 2),
    )
    return placed_testbed(tb, placement)


def assess(
    design,
    workload,
    network,
    perf,
    gpu,
    expertise: str,
    congestion_share: float = CONGESTION_SHARE,
    seed: int = 1,
    progress=None,
    spec: RiskSpec | None = None,
    deployment=None,
    congestion_is_storage: bool = True,
) -> RiskEvidence:
    """Every library scenario that applies to each fabric, measured and sent through *performance*.
    ``deployment`` (:class:`aifabric.stages.deployment.Deployment`, storage share resolved): the
    tuning state sets each fabric's congestion control, the storage share the storage-incast
    persistence (one setting for every fabric)."""
    from aifabric.stages.deployment import Deployment

    spec = spec or RiskSpec()
    dep = deployment or Deployment(storage_share=0.0, storage_share_range=(0.0, 0.0))
    for key, table in (("probability", spec.probability), ("hours", spec.hours)):
        unknown = sorted(set(table) - set(LIBRARY) - {ADAPTIVE_OFF})
        if unknown:
            from aifabric.errors import InputError

            raise InputError(
                "no such scenario",
                field=f"risk.{key}.{unknown[0]}",
                value=unknown[0],
                allowed=", ".join([*LIBRARY, ADAPTIVE_OFF]),
            )
    tick = progress or (lambda msg: None)
    out, jitter = [], None
    # switch failures are valued when a design asks for redundancy: then for every fabric (like with like)
    redundancy = spec.switch_failures or any(f.plan.dual_tor or f.plan.spine_spares for f in design.fabrics)
    if design.has_network:  # every fabric's testbed runs (and the scaling check's) in one parallel pool
        beds = [(testbed_of(fd, spec, tuning=dep.tuning), fd.technology == "roce") for fd in design.fabrics]
        scaled = [T.scaling_requests(tb, T.measured_of(tb, js)) for tb, js in beds if spec.check_scaling]
        T.measure_testbeds([(tb, js, None) for tb, js in beds] + sum(scaled, []), tick)
    for fd in design.fabrics:
        net, fp = network.fabric(fd.key), perf.fabric(fd.key)
        of = "training iteration" if fp.iteration is not None else "network communication"
        of = "decode step" if fp.inference is not None else of
        fspec = spec
        items: list[RiskItem] = []
        rm = None
        plan = fd.plan.to_dict()
        ar_off = adaptive_off_applies(fd, fp, design.has_network)
        if design.has_network:
            tick(f"packet-level risk testbed: {fd.key}")
            tb = testbed_of(fd, spec, getattr(workload, "placement", None), dep.tuning)
            rm = measure_testbed(tb, fd.technology == "roce")
            scaled = scaling_check(tb, tuple(rm.measured)) if spec.check_scaling else {}
            view = DesignView.of(fd, rm.measured)
            # with the flow model's re-measure below, InfiniBand's AR-off mistake is that item (as on RoCE)
            skip = {"ib-no-ar"} if ar_off else set()
            for sid in (x for x in rm.measured if not view.skips(x) and x not in skip):
                comm = rm.scenario_slowdown(sid, congestion_share)
                if sid in scaled:
                    comm = max(comm, scaled[sid]["use"])
                it = _slowdown(workload, fp, net, comm, extra=True)
                p, pl, ph, d, dl, dh, basis = _p_d(sid, LIBRARY[sid].kind, plan, expertise, fspec)
                prange = (dl, dh)
                if sid == "storage-incast" and "storage-incast" not in spec.probability:
                    # one setting: the deployment's storage placement and the job's own share
                    d = dep.storage_share or 0.0
                    dl, dh = prange = dep.storage_share_range or (d, d)
                    basis = dep.storage_basis or basis
                    own = fp.storage["backend_busy_share"] if fp.storage and dep.storage_on_fabric else None
                    if own is not None and (dep.source or {}).get("storage.share") is None:
                        # the storage workload: this fabric's own write burst / period
                        d, (dl, dh) = own, (own * 0.5, min(1.0, own * 2.0))
                        prange = (dl, dh)
                elif sid == "storage-incast":
                    prange = (d, d)  # the user's risk: section fixed it
                elif sid == "slow-receiver" and sid not in spec.probability:
                    k = congestion_share / CONGESTION_SHARE  # a share of the congested time
                    d, dl, dh = d * k, dl * k, dh * k
                    prange = (dl, dh)
                name, what = view.name(sid, LIBRARY[sid].breaks)
                if view.is_design(sid):
                    p, pl, ph, d, dl, dh, basis = LOSSY_P_D
                ell = lost_share(it)
                q, c = rm.comm_slowdown["quiet"].get(sid), rm.comm_slowdown["congested"].get(sid)
                items.append(
                    RiskItem(
                        name,
                        what,
                        p,
                        comm,
                        it,
                        0.0,
                        of,
                        q,
                        c,
                        d,
                        basis,
                        LIBRARY[sid].model,
                        ell,
                        p * d * ell,
                        (pl * dl * ell, ph * dh * ell),
                        _KIND_OF_TRIGGER[LIBRARY[sid].kind],
                        prange,
                    )
                )
            if fd.technology == "roce" and rm.jitter_sweep:
                jitter = _jitter(rm, workload, fp, net)
        if ar_off:
            tick("flow model of the same patterns with adaptive routing off")
            items.append(_adaptive_off_item(fd, workload, gpu, seed, net, fp, plan, expertise, spec, of))
        if design.has_network and net is not None:
            from aifabric.stages.risk.sharp import sharp_down_item

            sharp = sharp_down_item(workload, fp, net, of)
            items += [sharp] if sharp is not None else []
        good = (0.0, 0.0, 0.0, {})
        if design.has_network and fp.uses_backend:  # inference inside NVLink domains: a fault stops nothing
            good = interruptions(fd, spec)
            items.append(
                RiskItem(
                    "job-interruptions",
                    "NIC, link and switch failures that stop the synchronous job: detection, "
                    "restart and the work since the last checkpoint",
                    1.0,
                    None,
                    float("inf"),
                    0.0,
                    of,
                    None,
                    None,
                    good[0],
                    good[3]["basis"],
                    "rate x hours per interruption / one year (no slowdown model: every GPU waits)",
                    1.0,
                    good[0],
                    (good[1], good[2]),
                    "fault",
                )
            )
        if redundancy and design.has_network and fp.uses_backend:
            sf = switch_failures(
                plan,
                (spec.interrupt_hours,) * 3 if spec.interrupt_hours else INTERRUPT_HOURS,
                lambda c, fp=fp, net=net: _slowdown(workload, fp, net, c),
                bool(good[3].get("fabric_link_failure_stops_the_job")),
                (spec.hours["link-failure"],) * 3 if "link-failure" in spec.hours else SWITCH_REPAIR_HOURS,
            )
            items.append(
                RiskItem(
                    "switch-failures",
                    f"leaf / spine switch failures: {sf['leaf_failure']}; spines beyond the spares cut bisection",
                    1.0,
                    None,
                    float("inf"),  # expressed as the equivalent share of the year with every GPU stopped
                    0.0,
                    of,
                    persistence=sf["slowdown_loss"],
                    probability_basis=sf["basis"],
                    model="rate x (interruption hours + servers out, or repair hours x loss at the reduced "
                    "bandwidth) / one year, as GPU-hours of every GPU",
                    loss_while_present=1.0,
                    own_loss=sf["slowdown_loss"],  # its interruptions are in job-interruptions
                    own_loss_range=(sf["slowdown_loss_low"], sf["slowdown_loss_high"]),
                )
            )
            good = (*good[:3], {**good[3], "switch_failures": sf})
        out.append(FabricRisk(fd.key, _attribute(items), rm, good[0], good[3]))
    return RiskEvidence(
        expertise,
        MISCONFIG_PROBABILITY[expertise],
        congestion_share,
        tuple(out),
        jitter,
        congestion_is_storage,
        dep.storage_on_fabric,
    )


def _adaptive_off_item(fd, workload, gpu, seed, net, fp, plan, expertise, spec, of) -> RiskItem:
    """Adaptive routing off: a team that cannot enable or keep it working runs the fabric's fallback
    routing (:data:`AR_OFF_ROUTING`); the job's patterns, placed as the job is, re-measured with it
    (flow model) and sent through *performance* with the layout chosen on the healthy fabric."""
    route, comm, it = adaptive_off_slowdown(fd, workload, gpu, seed, net, fp)
    # a risk: section may name InfiniBand's AR-off mistake by the library's name for it
    key = (
        "ib-no-ar" if fd.technology == "infiniband" and ADAPTIVE_OFF not in spec.probability else ADAPTIVE_OFF
    )
    p, pl, ph, d, dl, dh, basis = _p_d(
        key if key in spec.probability else ADAPTIVE_OFF, "mistake", plan, expertise, spec
    )
    ell = lost_share(it)
    return RiskItem(
        ADAPTIVE_OFF,
        ADAPTIVE_OFF_WHAT,
        p,
        comm,
        it,
        0.0,
        of,
        None,
        None,
        d,
        basis,
        f"the job's placed patterns re-measured with {route} routing (flow model)",
        ell,
        p * d * ell,
        (pl * dl * ell, ph * dh * ell),
        "mistake",  # a team that cannot enable or keep adaptive routing working
    )


def _attribute(items: list[RiskItem]) -> tuple[RiskItem, ...]:
    """Split the combined loss over the scenarios in proportion to pᵢ·dᵢ·ℓᵢ (they add up to it)."""
    from dataclasses import replace

    total = combine(r.own_loss for r in items)
    raw = sum(r.own_loss for r in items)
    return tuple(replace(r, expected_loss=total * r.own_loss / raw if raw > 0 else 0.0) for r in items)


__all__ = [
    "MISCONFIG_PROBABILITY",
    "MISCONFIG_PROBABILITY_BASIS",
    "RATES",
    "RISK_KINDS",
    "FabricRisk",
    "RiskEvidence",
    "RiskItem",
    "RiskSpec",
    "assess",
    "combine",
    "failure_assumptions",
    "interruption_events",
    "interruptions",
    "lost_share",
]
