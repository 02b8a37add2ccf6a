"""TP-communication overlap per GEMM and method, and the overlap presets (training.overlap)."""

import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.errors import InputError
from aifabric.workload.llm.gpus import get_gpu
from aifabric.workload.llm.layout import Framework, Layout
from aifabric.workload.llm.models import get_model
from aifabric.workload.llm.network import AlphaBetaNetwork
from aifabric.workload.llm.overlap import PRESETS, TP_TABLES, Slot, resolve_overlap, slot_exposed
from aifabric.workload.llm.spec import TrainingSpec
from aifabric.workload.llm.step import step_time

H100 = get_gpu("h100")


def test_slot_methods():
    """none exposes all; ring_exchange hides all but what exceeds (n−1)/n of the GEMM; pipeline
    exposes the last chunk and pays its SMs; bulk hides behind the other GEMM and pays its SMs."""
    t, g = 1.0, 3.0
    assert slot_exposed(Slot(), t, g, 4, 132) == 1.0
    assert slot_exposed(Slot("ring_exchange", 1), t, g, 4, 132) == 0.0
    assert slot_exposed(Slot("ring_exchange", 1), 4.0, 2.0, 4, 132) == pytest.approx(4.0 - 1.5)
    assert slot_exposed(Slot("ring_exchange", 1, aggregate=True), 4.0, 2.0, 4, 132) == pytest.approx(3.0)
    assert slot_exposed(Slot("pipeline", 24, 4, True), t, g, 4, 132) == pytest.approx(0.25 + 3 * 24 / 108)
    assert slot_exposed(Slot("bulk", 16, 0, False), t, g, 4, 132) == pytest.approx(16 / 132)
    # the fitted interference share of the hidden part still costs
    assert slot_exposed(Slot("ring_exchange", 1), t, g, 4, 132, 0.5) == pytest.approx(0.5)


def _step(fw: Framework, model="llama3.1-70b"):
    lay = Layout(tp=4, pp=4, cp=2, vp=5, dp=2)
    return step_time(get_model(model), H100, 64, lay, 8192, 128, AlphaBetaNetwork(), fw=fw)


def test_recipe_table_hides_more_than_none():
    """The NeMo llama3_70b table exposes less TP time than no overlap, and the report names it."""
    off = _step(Framework())
    on = _step(Framework(tp_comm_overlap=True, tp_overlap="nemo-h100-h8192-tp4"))
    assert 0 < on.breakdown.exposed_s["tp"] < off.breakdown.exposed_s["tp"]
    assert on.to_dict()["overlap"]["tp"] == "nemo-h100-h8192-tp4"
    assert off.to_dict()["overlap"]["tp"] == "none"


def test_every_table_covers_every_slot_and_cites_a_source():
    for name, (source, slots) in TP_TABLES.items():
        assert source and len(slots) == 8, name
    for name, preset in PRESETS.items():
        assert preset.source and preset.tp in TP_TABLES, name


def test_scenario_overlap_preset_and_mapping():
    """training.overlap sets the framework's overlap flags; a flag framework names itself wins."""
    spec = TrainingSpec(overlap="nemo-gpt3-175b-h100")
    fw = spec.framework.to_framework()
    assert fw.tp_comm_overlap and fw.tp_overlap == "nemo-h100-h12288-tp4" and fw.overlap_grad_reduce
    spec = TrainingSpec(overlap={"preset": "none", "tp": True}, framework={"overlap_param_gather": True})
    fw = spec.framework.to_framework()
    assert fw.tp_overlap == "te-default" and not fw.overlap_grad_reduce and fw.overlap_param_gather
    assert TrainingSpec().framework.to_framework().tp_comm_overlap is False  # default: megatron-core


@pytest.mark.parametrize("bad", ["bogus", {"tp": "nope"}, {"grad_reduce": "yes"}, {"speed": 1}, 3])
def test_bad_overlap_is_one_line(bad):
    with pytest.raises(InputError) as e:
        resolve_overlap(bad)
    assert "training.overlap" in str(e.value) and "allowed" in str(e.value)


def test_train_refuses_an_unknown_preset_with_exit_2(tmp_path):
    y = tmp_path / "s.yaml"
    y.write_text(
        "advisor: {gpus: 64, gpu: h100, workload: training}\n"
        "training: {model: llama3.1-70b, global_batch: 128, micro_batch: 1, "
        "parallelism: {tp: 4, pp: 4, cp: 2, vp: 5}, overlap: bogus}\n"
    )
    r = CliRunner().invoke(app, ["train", str(y), "--fabric", "ib"])
    assert r.exit_code == 2 and "training.overlap" in r.output and "Traceback" not in r.output
