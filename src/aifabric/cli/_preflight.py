"""The checks ``aifabric simulate`` runs before any work, shared with ``aifabric validate``.

:func:`prepare` loads a scenario and checks everything a run needs — the scenario, the mode, the
topology (its size against the available memory first, then built), the fabric's references to
switches and links, the workload (its flow count against the memory guard first, then the flows
built: flow files read and their endpoints checked), and the output folder — and returns what the
run uses. ``validate`` calls it too, so a file that passes ``validate`` passes the same checks as
``simulate`` does; every problem is an :class:`~aifabric.errors.InputError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aifabric.errors import InputError

MODES = ("packet", "flow")


@dataclass
class Prepared:
    """A checked scenario and what its run needs."""

    scenario: object
    file: str
    mode: str
    topology: object = None
    flows: object = None  # FlowColumns (None: a collective, or no workload)
    num_flows: int = 0


def check_out_dir(out: Path, force: bool) -> None:
    """``--out DIR`` must be creatable and writable, and new or empty unless ``force`` (then the
    earlier run's result files in it are removed before writing, so two runs never mix)."""
    from aifabric.sim.results import RESULT_FILES

    flag = "--out"
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", field=flag, value=str(out), allowed="a folder path")
    if out.is_dir():
        try:
            entries = sorted(p.name for p in out.iterdir())
        except OSError as exc:
            raise InputError(
                f"cannot read the folder: {exc.strerror or exc}", field=flag, value=str(out)
            ) from None
        if entries and not force:
            raise InputError(
                f"folder is not empty ({len(entries)} entries, e.g. {entries[0]!r}: an earlier run?)",
                field=flag,
                value=str(out),
                allowed="a new or empty folder, or --force to replace the results in it",
            )
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".aifabric-write-test-{__import__('os').getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(
            f"cannot write results there: {exc.strerror or exc}",
            field=flag,
            value=str(out),
            allowed="a writable folder path",
        ) from None
    if force:
        for name in RESULT_FILES:
            try:
                (out / name).unlink(missing_ok=True)
            except OSError as exc:
                raise InputError(
                    f"cannot replace {name}: {exc.strerror or exc}", field=flag, value=str(out)
                ) from None


def prepare(
    path: Path,
    mode: str | None = None,
    out: Path | None = None,
    force: bool = False,
    json_flows: bool = True,
) -> Prepared:
    """Load and check ``path`` for a simulation run (see the module docstring)."""
    from aifabric.scenario import load_scenario

    sc = load_scenario(path)
    file = str(path)
    try:
        return _prepare(sc, file, mode, out, force, json_flows)
    except InputError as exc:
        if exc.field in ("--out", "--mode") and not exc.file:
            raise
        raise in_file(exc, file) from None


def in_file(exc: InputError, file: str) -> InputError:
    """``exc`` naming the scenario ``file``; a problem in a file the scenario refers to (a flow or
    topology file) names both: ``SCENARIO: FLOWFILE: line 3: ...``."""
    if exc.file and exc.file != file:
        return InputError(
            exc.problem, file=f"{file}: {exc.file}", field=exc.field, value=exc.value, allowed=exc.allowed
        )
    return exc if exc.file else exc.with_file(file)


def _prepare(sc, file: str, mode, out, force, json_flows) -> Prepared:

    m = mode or sc.sim.mode
    if m not in MODES:
        raise InputError("unknown mode", field="--mode", value=m, allowed=", ".join(MODES))
    if out is not None:
        check_out_dir(Path(out), force)
    if sc.topology is None:
        raise InputError("a simulation needs a topology", field="topology", allowed="a topology: section")
    if sc.workload is None:
        raise InputError("a simulation needs a workload", field="workload", allowed="a workload: section")
    topo = checked_topology(sc, m)
    w = sc.workload
    maxhop = 2 * int(topo.node_tier.max(initial=0)) + 2
    if w.kind == "collective":
        return _prepare_collective(sc, file, m, topo, maxhop, json_flows)
    from aifabric.workload.traffic import estimate_flow_count, flow_columns

    nf = estimate_flow_count(sc, topo)
    _check_flows_memory(m, nf, topo, maxhop, sc.fabric, json_flows, "the workload")
    check_progress(sc, topo, m)
    flows = flow_columns(sc, topo)
    if not len(flows):
        raise InputError(
            "the workload makes no flows: the run would have nothing to simulate",
            field="workload",
            allowed="a flow file with at least one flow, or a workload that sends",
        )
    check_routes(topo, flows["src"], flows["dst"])
    return Prepared(sc, file, m, topo, flows, len(flows))


def check_progress(sc, topo, mode: str) -> None:
    """What a run needs to make progress (issue 32), so no run that can only stall starts: the
    flow model supports the routing mode; every switch's shared buffer holds one packet per port
    (RoCE: ``switch_buffer`` ≥ ports × (MTU + header) of the switch with the most ports — less and
    a store-and-forward switch cannot accept a packet on every port at once); an InfiniBand VL
    buffer holds one packet (credits are granted per packet: a smaller buffer never grants one)."""
    import numpy as np

    fab = sc.fabric
    if mode == "flow":
        from aifabric.flow.paths import flow_routing

        flow_routing(fab.routing)
        return
    packet = fab.mtu_bytes + fab.header_bytes
    if fab.technology == "infiniband":
        vl = fab.ib.vl_buffer
        if vl is not None and vl < packet:
            raise InputError(
                f"a VL buffer smaller than one packet ({fab.mtu_bytes} B MTU + {fab.header_bytes} B "
                f"header = {packet} B) never grants a credit: no flow could finish",
                field="fabric.ib.vl_buffer",
                value=vl,
                allowed=f"≥ {packet} B",
            )
        return
    ends = np.concatenate([topo.link_a, topo.link_b])
    ports = np.bincount(ends, minlength=topo.num_nodes)
    sw = np.flatnonzero(topo.node_tier > 0)
    if not len(sw):
        return
    most = int(ports[sw].max())
    need = most * packet
    buf = fab.switch_buffer_bytes
    if buf < need:
        raise InputError(
            f"a shared buffer smaller than one packet per port ({most} ports × {packet} B: MTU "
            f"{fab.mtu_bytes} B + header {fab.header_bytes} B) cannot accept a packet on every port: "
            "the run would stall",
            field="fabric.switch_buffer",
            value=buf,
            allowed=f"≥ {need} B for this topology",
        )


def path_model(topo):
    """The topology's :class:`~aifabric.flow.paths.PathModel`, built once and kept on it (the
    engines reuse it; it is deterministic, so results are the same as building their own)."""
    from aifabric.flow.paths import PathModel

    pm = topo.__dict__.get("_flow_path_model")
    if pm is None:
        pm = PathModel(topo)  # raises "host without a link to a switch"
        object.__setattr__(topo, "_flow_path_model", pm)
    return pm


def check_routes(topo, src, dst) -> None:
    """Every flow has a path (its hosts' switches are connected), as routing will need."""
    import numpy as np

    from aifabric.flow.paths import _FAR

    pm = path_model(topo)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if not len(src):
        return
    s_h, d_h = pm.host_index[src], pm.host_index[dst]
    up = pm.up_node[s_h]
    up_sw = np.where(up >= 0, pm.sw_index[np.maximum(up, 0)], -1)
    dist = pm.dist_to_host(up_sw, np.repeat(d_h[:, None], up_sw.shape[1], axis=1)).min(axis=1)
    bad = np.flatnonzero(dist >= _FAR)
    if len(bad):
        i = int(bad[0])
        names = topo.node_names
        raise InputError(
            f"no route: flow {i} from {names[int(src[i])]} to {names[int(dst[i])]} crosses switches that "
            f"are not connected",
            field="topology",
            allowed="a topology where every host's switch reaches every other",
        )


def checked_topology(sc, m: str = "packet"):
    """The scenario's topology, built after a memory estimate, with the fabric's references to
    it (PFC overrides, PAUSE storms, failed links) resolved; flow mode rejects what it lacks."""
    from aifabric import memory

    need = memory.topology_bytes(sc.topology)
    if need is not None:
        memory.check(need, f"building this {sc.topology.kind} topology", field="topology")
    from aifabric.topology import from_spec

    topo = from_spec(sc.topology)
    fab = sc.fabric
    if m == "flow":
        for name in ("pfc_overrides", "pause_storms", "failures"):
            if getattr(fab, name, None):
                raise InputError(
                    "the flow model has no PFC, PAUSE frames or failures; this needs the packet engine",
                    field=f"fabric.{name}",
                    allowed="sim.mode: packet (aifabric simulate --mode packet)",
                )
    if fab.pfc_overrides or fab.pause_storms:  # switch / node names exist
        from aifabric.sim.misconfig import check

        check(fab, topo, sc.sim.until_ps)
    if fab.failures:  # failed links exist (the same resolution the engine uses)
        from aifabric.sim.engine import _failure_events

        _failure_events(fab, topo)
    from aifabric.flow.paths import path_model_bytes

    ns = topo.num_switches
    memory.check(
        path_model_bytes(ns, ns, topo.num_links), "the routing tables of this topology", field="topology"
    )
    path_model(topo)  # every host has a link to a switch
    return topo


def _check_flows_memory(mode, nf, topo, maxhop, fab, json_flows, what) -> None:
    from aifabric import memory

    if mode == "flow":
        from aifabric.flow.engine import estimate_bytes

        need = estimate_bytes(nf, maxhop, json_flows)
        hint = "fewer flows or hosts"
    else:
        from aifabric.sim.engine import estimate_bytes

        need = estimate_bytes(nf, topo.num_links, maxhop, fab, json_flows)
        hint = "fewer flows or hosts, or sim.mode: flow (the flow model needs far less)"
    memory.check(need, f"{what} ({nf:,} flows, {mode} mode)", field="workload", hint=hint)


def _prepare_collective(sc, file, mode, topo, maxhop, json_flows) -> Prepared:
    """A collective: the fabric restrictions and the step decomposition simulate starts with."""
    w = sc.workload
    ranks = w.hosts or topo.num_hosts
    if ranks < 2:
        raise InputError(
            "a collective needs at least 2 hosts",
            field="workload.hosts" if w.hosts else "topology",
            value=ranks,
            allowed=f"a topology with 2 or more hosts (this one has {topo.num_hosts})",
        )
    if ranks > topo.num_hosts:
        raise InputError(
            "more hosts than the topology has",
            field="workload.hosts",
            value=ranks,
            allowed=f"2..{topo.num_hosts}",
        )
    # the largest network step: all-to-all sends between every pair, the others ~2 flows per rank
    nf = ranks * (ranks - 1) if w.op == "all-to-all" else 4 * ranks
    _check_flows_memory(mode, nf, topo, maxhop, sc.fabric, json_flows, "the collective's largest step")
    check_progress(sc, topo, mode)
    if mode == "packet":
        from aifabric.sim.collective import _check_fabric

        _check_fabric(sc.fabric)
    from aifabric.workload.collectives import collective_flows

    collective_flows(w.op, w.size, topo, ranks=w.hosts, algorithm=w.algorithm or "ring")
    return Prepared(sc, file, mode, topo, None, 0)
