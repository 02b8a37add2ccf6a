"""The main job as stages: each stage callable alone, the evidence chain in --json, the measure
cache, the Python API example of the docs (docs/api.md), and the size/shape rules of docs/architecture.md."""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.hardware.catalog import load_catalog
from aifabric.stages.design.fabrics import DesignInput, default_options, design
from aifabric.stages.measure import network as M
from aifabric.stages.measure.network import FabricNetwork, measure
from aifabric.stages.performance import fabric_performance, performance, step_time
from aifabric.stages.workload import WorkloadInput, workload

ROOT = Path(__file__).resolve().parents[1]
STAGES = ROOT / "src" / "aifabric" / "stages"
CAT = load_catalog()


@pytest.fixture(scope="module")
def chain():
    """design → workload → measure → performance for 256 H100 training Llama-3 70B, by hand."""
    gpu = CAT.get("gpu", "h100")
    wl = workload(WorkloadInput("training", 256, 8, float(gpu.hbm_gbytes), "llama3-70b", gpu="h100"))
    des = design(DesignInput(256, "h100", default_options(gpu), CAT))
    net = measure(des, wl, gpu)
    perf = performance(wl, des, net)
    return gpu, wl, des, net, perf


def test_stages_by_hand_match_compare(chain):
    """Chaining the stages by hand gives compare's numbers (capex, busbw, iteration time)."""
    gpu, wl, des, net, perf = chain
    r = CliRunner().invoke(app, ["compare", "--gpus", "256", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    for f in out["fabrics"]:
        assert des.fabric(f["fabric"]).capex_usd == f["capex_usd"]
        assert net.fabric(f["fabric"]).busbw_gbps == f["busbw_gbps"]
        assert perf.fabric(f["fabric"]).iteration_time_s == f["iteration_time_s"]


def test_workload_lists_each_groups_collectives(chain):
    """The workload stage names each parallel group's collectives with size, count and overlap window
    (on the reference layout): the DP gradient reduce-scatter overlaps the last micro-batch's
    backward and crosses the network, TP runs on NVLink."""
    _, wl, _, _, _ = chain
    by = {(c["group"], c["op"]): c for c in wl.collectives}
    dp = by[("dp", "reduce-scatter")]
    assert "last micro-batch" in dp["window"] and "network" in dp["span"]
    assert dp["size_bytes"] > 0 and dp["count"] > 0
    assert all(c["span"] == "nvlink" for c in wl.collectives if c["group"] == "tp")
    assert [p.name for p in wl.patterns][:2] == ["dp-ring-step", "rail-permutation"]
    # the pipeline's stage sends, placed by the reference layout, when it has stages across servers
    lay = wl.parallelism
    assert ("pp-send-recv" in [p.name for p in wl.patterns]) == (lay.pp > 1)


def test_performance_takes_a_users_own_measurement(chain):
    """A user's measured fabric (FabricNetwork.from_measured) replaces *measure*: the same
    end-to-end efficiency as the flow model's × the NIC's gives the same iteration; half the
    efficiency slows only the network part, and never speeds anything up."""
    gpu, wl, des, net, perf = chain
    ib = net.fabric("infiniband")
    mine = FabricNetwork.from_measured(
        "infiniband",
        ib.link_rate_bps,
        ib.ring_step_efficiency * ib.nic_efficiency,  # a user's busbw / line rate includes the NIC's
        ib.path_latency_us,
        ib.nvlink_busbw_gbps,
        all_to_all_efficiency=ib.permutation_efficiency * ib.nic_efficiency,
        nvls_gpu=ib.nvls_gpu,
    )
    same = fabric_performance(wl, mine, 1.0)
    assert same.iteration_time_s == pytest.approx(perf.fabric("infiniband").iteration_time_s, rel=1e-12)
    slow_net = FabricNetwork.from_measured(
        "infiniband",
        ib.link_rate_bps,
        ib.ring_step_efficiency / 2,
        50.0,
        ib.nvlink_busbw_gbps,
        nvls_gpu=ib.nvls_gpu,
    )
    base = same.iteration
    worse = step_time(wl, slow_net, base.layout)  # the same layout on the slower network
    assert worse.breakdown.compute_s == base.breakdown.compute_s
    dp = {(c.group, c.op): c for c in worse.collectives}[("dp", "reduce-scatter")]
    dp0 = {(c.group, c.op): c for c in base.collectives}[("dp", "reduce-scatter")]
    assert dp.time_each_s > dp0.time_each_s and worse.iteration_s >= base.iteration_s


def test_from_measured_rejects_nonsense():
    """An efficiency outside (0, 1] or an unknown technology is one InputError naming the field."""
    from aifabric.errors import InputError

    with pytest.raises(InputError, match="efficiency"):
        FabricNetwork.from_measured("roce", 400e9, 1.5, 2.0)
    with pytest.raises(InputError, match="technology"):
        FabricNetwork.from_measured("ethernet", 400e9, 0.9, 2.0)


def test_measure_never_simulates_the_same_pattern_twice(chain):
    """Measuring a fabric again (as the risk stage does) is answered from the cache."""
    gpu, wl, des, _, _ = chain
    before = M.measure_pattern.cache_info()
    M.measure_fabric(des.fabrics[1], wl, gpu, sweep=False)
    after = M.measure_pattern.cache_info()
    assert after.misses == before.misses and after.hits >= before.hits + M.RING_SEEDS + 1


def test_json_is_the_evidence_chain_in_stage_order():
    """--json carries every stage's evidence in stage order, and its numbers are the ones the
    published keys show (each number traceable to the stage that made it)."""
    r = CliRunner().invoke(app, ["compare", "--gpus", "64", "--json"])
    out = json.loads(r.stdout)
    assert out["stages"] == ["design", "workload", "measure", "performance", "risk", "decide"]
    assert list(out["evidence"]) == out["stages"]
    ev = out["evidence"]
    for i, f in enumerate(out["fabrics"]):
        assert ev["design"]["fabrics"][i]["capex_usd"] == f["capex_usd"]
        assert ev["measure"]["fabrics"][i]["busbw_gbps"] == f["busbw_gbps"]
        assert ev["performance"]["fabrics"][i]["iteration_time_s"] == f["iteration_time_s"]
        assert ev["risk"]["fabrics"][i]["expected_loss"] == f["expected_loss"]
    assert ev["decide"]["recommendation"] == out["recommendation"]


def test_docs_api_example_runs_as_written():
    """The Python API example of docs/api.md (the block after <!-- api-example -->) runs and
    returns DataFrames."""
    text = (ROOT / "docs" / "api.md").read_text()
    m = re.search(r"<!-- api-example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "docs/api.md lost its API example"
    ns: dict = {}
    exec(compile(m.group(1), "docs/api.md api-example", "exec"), ns)  # noqa: S102
    import pandas as pd

    assert isinstance(ns["res"].fabrics, pd.DataFrame) and len(ns["res"].fabrics) == 2
    assert isinstance(ns["p"].bom, pd.DataFrame) and len(ns["p"].bom) > 0


def test_api_bad_input_is_one_error():
    """aifabric.compare with a bad value raises an InputError (or InputErrors) naming the field."""
    import aifabric
    from aifabric.errors import InputError, InputErrors

    with pytest.raises((InputError, InputErrors), match="gpu"):
        aifabric.compare(gpu="a100")
    with pytest.raises(InputError, match="technology"):
        aifabric.plan(64, technology="ethernet")


def test_stage_modules_stay_small_and_the_pipeline_only_chains():
    """No stage module above 600 lines; the pipeline's run() is a short list of stage calls."""
    for p in STAGES.glob("*.py"):
        assert len(p.read_text().splitlines()) <= 600, p.name
    src = (STAGES / "pipeline.py").read_text()
    # run_performance (shared with `aifabric train`) chains the first four, run() the rest
    body = src[src.index("def run_performance(") :]
    calls = re.findall(r"= (run_performance|workload|design|measure|performance|assess|decide)\(", body)
    # run() chains the first four (and again for a host-link media alternative, issue 25); _weigh
    # chains risk and decide, for the base deployment and each categorical alternative
    assert calls == [
        "design",
        "workload",
        "measure",
        "performance",
        "run_performance",
        "run_performance",
        "assess",
        "decide",
    ]


def test_one_node_compare_prints_its_table():
    """compare on one node (8 GPUs) prints the table without a network busbw (it used to crash)."""
    r = CliRunner().invoke(app, ["compare", "--gpus", "8"])
    assert r.exit_code == 0, r.output
    assert "one node" in r.output and "Recommendation: none" in r.output


def test_compare_json_is_strict_json():
    """--json prints strict JSON: no NaN or Infinity (a measured-but-undefined value is null)."""

    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    r = CliRunner().invoke(app, ["compare", "--gpus", "64", "--json"])
    assert r.exit_code == 0, r.output
    json.loads(r.stdout, parse_constant=refuse)
