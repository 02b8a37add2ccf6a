"""Layout search, memory model, and one-line errors for impossible or oversized layouts."""

import time

import pytest

from aifabric.errors import InputError
from aifabric.workload.llm import TrainingSpec, plan_training
from aifabric.workload.llm.gpus import get_gpu
from aifabric.workload.llm.layout import Framework, Layout
from aifabric.workload.llm.memory import memory_per_gpu
from aifabric.workload.llm.models import get_model
from aifabric.workload.llm.network import AlphaBetaNetwork
from aifabric.workload.llm.search import search_layouts

NET = AlphaBetaNetwork()


def test_search_16k_gpus_is_fast_and_returns_the_fastest():
    """405B on 16,384 H100 with everything open: well under a minute; best is no slower than runners-up."""
    t0 = time.perf_counter()
    r = search_layouts(get_model("llama3.1-405b"), get_gpu("h100"), 16384, 8192, 2048, NET)
    assert time.perf_counter() - t0 < 20
    assert r.fitting > 0 and len(r.runners_up) == 4
    assert all(r.best.iteration_s <= x.iteration_s for x in r.runners_up)
    assert r.best.layout.gpus == 16384
    assert r.best.memory.total_bytes <= get_gpu("h100").hbm_bytes


def test_search_respects_given_keys_and_differs_by_network():
    """Given keys are kept; open ones are chosen per network model (a slow network favours less DP traffic)."""
    model, gpu = get_model("llama3.1-70b"), get_gpu("h100")
    fast = search_layouts(model, gpu, 512, 8192, 512, NET, fixed={"tp": 8})
    slow = search_layouts(model, gpu, 512, 8192, 512, AlphaBetaNetwork(link_gbps=25), fixed={"tp": 8})
    assert fast.best.layout.tp == 8 and slow.best.layout.tp == 8
    assert slow.best.iteration_s > fast.best.iteration_s
    assert fast.searched == ("pp", "cp", "vp", "dp", "micro_batch")


def test_interface_example_runs_as_given():
    """The interface.md scenario (405B on 576 H100, tp 8, pp 9, cp 2, vp 7) fits and runs as given."""
    spec = TrainingSpec(
        model="llama3.1-405b",
        seq_len=8192,
        global_batch=252,
        micro_batch=1,
        parallelism={"tp": 8, "pp": 9, "cp": 2, "vp": 7},
    )
    r = plan_training(spec, "h100", 576, NET)
    assert r.best.layout == Layout(tp=8, pp=9, cp=2, vp=7, dp=4, ep=1, micro_batch=1)
    assert 0 < r.best.mfu < 1


@pytest.mark.parametrize(
    ("parallelism", "field", "words"),
    [
        ({"tp": 3}, "training.parallelism.tp", "allowed: 1, 2, 4, 8"),
        ({"cp": 3}, "training.parallelism.cp", "multiple of 2 × cp"),
        ({"tp": 8, "pp": 7, "cp": 1}, "training.parallelism", "does not divide the 576 GPUs"),
        ({"ep": 2}, "training.parallelism.ep", "MoE models only"),
        ({"tp": 8, "pp": 9, "cp": 1, "dp": 4}, "training.parallelism", "≠ 576 GPUs"),
    ],
)
def test_impossible_layouts_are_one_line_errors(parallelism, field, words):
    """Impossible layouts raise InputError naming the field and what is allowed, on one line."""
    spec = TrainingSpec(model="llama3.1-405b", seq_len=8192, global_batch=252, parallelism=parallelism)
    with pytest.raises(InputError) as e:
        plan_training(spec, "h100", 576, NET)
    msg = str(e.value)
    assert msg.startswith(field) and words in msg and "\n" not in msg


def test_memory_that_does_not_fit_says_by_how_much():
    """405B on 8 H100 does not fit: the error says how many GiB the leanest layout needs and the GPU has."""
    spec = TrainingSpec(model="llama3.1-405b", seq_len=8192, global_batch=64)
    with pytest.raises(InputError, match=r"needs \d+\.\d GiB per GPU, has 79\.6 GiB: weights .*\(largest: "):
        plan_training(spec, "h100", 8, NET)


def test_recompute_and_zero_shrink_memory():
    """Full recomputation shrinks activations; ZeRO-3 shards the weights; ZeRO-1 the optimizer state."""
    m, lay = get_model("llama3.1-70b"), Layout(tp=8, pp=2, cp=1, dp=4)
    base = memory_per_gpu(m, lay, 8192, 64)
    full = memory_per_gpu(m, lay, 8192, 64, Framework(recompute="full"))
    z3 = memory_per_gpu(m, lay, 8192, 64, Framework(zero=3))
    z0 = memory_per_gpu(m, lay, 8192, 64, Framework(zero=0))
    assert full.activations_bytes < 0.2 * base.activations_bytes
    assert z3.weights_bytes < 0.5 * base.weights_bytes
    assert z0.optimizer_bytes == pytest.approx(4 * base.optimizer_bytes, rel=1e-9)
