"""Rank order as a layout choice: ``parallelism.order`` places a pipeline's stages or a DP group inside
the NVLink domain; the step model, the layout search and the traffic patterns the measure stage runs
all follow it."""

import numpy as np
import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.errors import InputError
from aifabric.stages.workload import WorkloadInput, stage_hops, workload
from aifabric.workload.llm import AlphaBetaNetwork, get_gpu, get_model, plan_training
from aifabric.workload.llm.layout import (
    DEFAULT_ORDER,
    TP_PP_DP_ORDER,
    Layout,
    check_order,
    dense_sizes,
    group_ranks,
    parse_order,
)
from aifabric.workload.llm.step import step_time
from aifabric.workload.placement import dp_ring_hops

runner = CliRunner()
GB200 = get_gpu("gb200")
NET = AlphaBetaNetwork(400, GB200.nvlink_bytes_per_s)
# Llama 3.1 405B as NVIDIA's GB200 recipes lay it out: TP 4 × CP 2 × PP 8 = 64 GPUs per replica
LAY = {"tp": 4, "pp": 8, "cp": 2, "vp": 8}


def _spec(order: str | None, gbs: int = 128) -> dict:
    par = dict(LAY, **({"order": order} if order else {}))
    return {
        "model": "llama3.1-405b",
        "seq_len": 8192,
        "global_batch": gbs,
        "micro_batch": 1,
        "parallelism": par,
    }


@pytest.mark.parametrize(
    "order, words",
    [
        ("tp-xx-dp-pp", "unknown group 'xx'"),
        ("dp-tp-pp", "tp first"),
        ("tp-dp-dp-pp", "tp first"),
        ("tp-dp", "tp first"),
    ],
)
def test_bad_orders_are_one_line_errors(order, words):
    with pytest.raises(InputError) as e:
        parse_order(order)
    assert e.value.field == "training.parallelism.order" and words in str(e.value)
    assert "\n" not in str(e.value)


def test_an_order_that_leaves_out_a_used_group_is_refused():
    """Megatron appends the groups an order leaves out when they are 1, and refuses otherwise."""
    assert parse_order("tp-pp-dp") == ("tp", "pp", "dp", "cp", "ep")
    check_order(Layout(tp=4, pp=8, dp=2, order="tp-pp-dp"))
    with pytest.raises(InputError, match="leaves out cp"):
        check_order(Layout(tp=4, pp=8, cp=2, dp=2, order="tp-pp-dp"))


def test_the_default_order_is_megatrons_strides():
    """tp-cp-ep-dp-pp: DP × CP group of (stage, tp index) = stage·tp·cp·dp + t + tp·j."""
    tp, cp, dp, pp = 2, 2, 3, 2
    rows = group_ranks(dense_sizes(Layout(tp=tp, cp=cp, dp=dp, pp=pp)), DEFAULT_ORDER, ("cp", "dp"))
    want = [[s * tp * cp * dp + t + tp * j for j in range(cp * dp)] for s in range(pp) for t in range(tp)]
    assert rows.tolist() == want
    # tp-pp-dp: one pipeline's stages are tp ranks apart, a DP group tp·pp apart
    rows = group_ranks(dense_sizes(Layout(tp=tp, dp=dp, pp=pp)), "tp-pp-dp", ("pp",))
    assert rows[0].tolist() == [0, tp]


def test_scenario_order_is_validated(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(
        "advisor: {gpus: 128, gpu: gb200-nvl72}\n"
        "training: {model: llama3.1-405b, global_batch: 64, micro_batch: 1,\n"
        "  parallelism: {tp: 4, pp: 8, cp: 2, vp: 8, order: tp-pp-dp}}\n"
    )
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2 and "training.parallelism.order" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1
    p.write_text(p.read_text().replace("tp-pp-dp", "tp-cp-pp-dp"))
    assert runner.invoke(app, ["validate", str(p)]).exit_code == 0


def test_gb200_tp_pp_dp_puts_pipeline_sends_on_nvlink():
    """GB200 NVL72, 256 GPUs: in tp-cp-ep-pp-dp a pipeline's 8 stages of 8 GPUs fill one 64-GPU
    NVLink domain, so the step model times its sends over NVLink and DP goes over the network; in
    Megatron's default order the reverse."""
    gpus, model = 256, get_model("llama3.1-405b")
    res = {}
    for order in (DEFAULT_ORDER, TP_PP_DP_ORDER):
        lay = Layout(tp=4, pp=8, cp=2, vp=8, dp=4, order=order)
        r = step_time(model, GB200, gpus, lay, 8192, 128, NET)
        res[order] = r, {c.group: c.span for c in r.collectives}
    (d, dspan), (t, tspan) = res[DEFAULT_ORDER], res[TP_PP_DP_ORDER]
    assert "network" in dspan["pp"] and dspan["dp"] == "nvlink"  # 2 stages a domain: timed as network
    assert tspan["pp"] == "nvlink" and tspan["dp"] == "nvlink+network"
    assert t.breakdown.exposed_s["pp"] < d.breakdown.exposed_s["pp"]
    assert t.breakdown.compute_s == d.breakdown.compute_s


def _patterns(order: str):
    w = workload(WorkloadInput("training", 256, 4, 186.0, training=_spec(order), gpu="gb200-nvl72"))
    return w, {p.name: p for p in w.patterns}


def test_gb200_order_changes_the_measured_traffic():
    """The measure stage's patterns follow the order and the 64-GPU NVLink domain (16 trays of 4):
    default — the pipeline sends between racks are network hops (those inside one go over NVLink), the DP ring stays inside them (no network hop);
    tp-pp-dp — no pipeline send reaches the network, and every DP ring hop crosses racks."""
    w, p = _patterns(DEFAULT_ORDER)
    assert w.parallelism.order == DEFAULT_ORDER
    src, dst, pairs = stage_hops(p["pp-send-recv"])
    assert 0 < len(src) < pairs and ((src // 64) != (dst // 64)).all()  # 2 stages a domain: 3 of 7 cross
    assert len(dp_ring_hops(4, 2, 4, 8, 4, order=DEFAULT_ORDER, domain_nodes=16)[0]) == 0
    w, p = _patterns(TP_PP_DP_ORDER)
    assert w.parallelism.order == TP_PP_DP_ORDER and "pp-send-recv" not in p
    s, d, rail = dp_ring_hops(4, 2, 4, 8, 4, order=TP_PP_DP_ORDER, domain_nodes=16)
    assert len(s) and ((s // 16) != (d // 16)).all() and (rail < 4).all()
    flows = p["dp-ring-step"].flows()
    assert p["dp-ring-step"].to_dict()["rank_order"] == TP_PP_DP_ORDER
    assert ((flows["src"] // 64) != (flows["dst"] // 64)).all()


def test_search_tries_both_orders_where_the_domain_is_larger_than_tp():
    """GB200 (64-GPU domain, TP 4): both orders are timed, the faster is kept, the other is a
    runner-up; H100 with TP 8 (the whole node): only Megatron's default, order not searched."""
    r = plan_training(_spec(None, 256), "gb200", 512, NET, runners_up=3)
    assert "order" in r.searched
    times = {x.layout.order: x.iteration_s for x in (r.best, *r.runners_up)}
    assert set(times) == {DEFAULT_ORDER, TP_PP_DP_ORDER}
    assert r.best.iteration_s == min(times.values())
    h = plan_training(
        {"model": "llama3.1-70b", "global_batch": 128, "parallelism": {"tp": 8, "pp": 4}},
        "h100",
        64,
        AlphaBetaNetwork(),
        runners_up=3,
    )
    assert "order" not in h.searched
    assert {x.layout.order for x in (h.best, *h.runners_up)} == {DEFAULT_ORDER}


def test_a_given_order_is_kept():
    r = plan_training(_spec(TP_PP_DP_ORDER, 256), "gb200", 512, NET, runners_up=2)
    assert "order" not in r.searched and r.best.layout.order == TP_PP_DP_ORDER
    assert np.isfinite(r.best.iteration_s)
