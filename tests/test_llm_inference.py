"""Inference and storage traffic: back-end needed or not, decode-step network time, KV transfer, checkpoints."""

import pytest

from aifabric.errors import InputError
from aifabric.workload.llm.inference import InferenceSpec, inference_step, kv_bytes_per_token
from aifabric.workload.llm.models import get_model
from aifabric.workload.llm.network import AlphaBetaNetwork
from aifabric.workload.llm.storage import storage_traffic

NET = AlphaBetaNetwork()


def test_model_served_inside_one_node_puts_nothing_on_the_backend():
    """Llama 3.1 70B FP8 on an 8-GPU H100 node, not disaggregated: no back-end traffic at all."""
    r = inference_step(InferenceSpec(model="llama3.1-70b", precision="fp8", batch=32), "h100", NET)
    assert not r.needs_backend and r.decode_network_s == 0.0 and r.kv_transfer_s == 0.0
    assert r.gpus_per_instance <= 8 and "NVLink domain" in r.reason


def test_wide_ep_decode_goes_over_the_network_and_fits_in_nvl72():
    """DeepSeek-V3 with a big KV cache spans several H100 nodes (network all-to-all per decode step),
    but fits one GB200 NVL72 domain (no back-end)."""
    spec = InferenceSpec(
        model="deepseek-v3", precision="fp8", batch=512, prompt_tokens=8192, gpus_per_instance=32
    )
    h100 = inference_step(spec, "h100", NET)
    assert h100.needs_backend and h100.decode_network_s > 0
    assert 0 < h100.network_share_of_itl < 1
    nvl = inference_step(spec, "gb200", NET)
    assert not nvl.needs_backend and nvl.decode_network_s == 0.0


def test_low_latency_dispatch_matches_deepep_order():
    """The α-β all-to-all for DeepEP's low-latency case (128 tokens, hidden 7168, top-8, FP8 dispatch,
    EP 128 over 16 nodes) is within 25 % of the published 192 µs dispatch / 369 µs combine."""
    per_gpu = 128 * 8 * 7168
    dispatch = NET.collective_s("all-to-all", per_gpu * 1.0, 16, "network")
    combine = NET.collective_s("all-to-all", per_gpu * 2.0, 16, "network")
    assert dispatch == pytest.approx(192e-6, rel=0.25)
    assert combine == pytest.approx(369e-6, rel=0.25)


def test_disaggregated_kv_transfer_grows_with_prompt():
    """Disaggregated prefill → decode moves the request's KV cache once; a longer prompt takes longer."""
    short = inference_step(InferenceSpec(disaggregated=True, prompt_tokens=2048), "h100", NET)
    long = inference_step(InferenceSpec(disaggregated=True, prompt_tokens=32768), "h100", NET)
    assert short.needs_backend and 0 < short.kv_transfer_s < long.kv_transfer_s
    assert long.ttft_s == pytest.approx(long.prefill_s + long.kv_transfer_s)
    assert kv_bytes_per_token(get_model("llama3.1-70b")) == 80 * 2 * 1024 * 2


def test_instance_too_small_is_an_error():
    """An instance given too few GPUs for weights + KV cache is a one-line error saying by how much."""
    with pytest.raises(InputError, match="GiB per GPU"):
        inference_step(
            InferenceSpec(model="llama3.1-405b", precision="bf16", gpus_per_instance=4), "h100", NET
        )


def test_checkpoint_traffic_and_backend_victim_share():
    """A 405B checkpoint is 14 bytes per parameter; on the back-end it occupies burst/period of the time,
    off the back-end nothing."""
    m = get_model("llama3.1-405b")
    off = storage_traffic(m, 16384, tokens_per_s=2e6)
    on = storage_traffic(m, 16384, tokens_per_s=2e6, on_backend=True)
    assert off.checkpoint_bytes == pytest.approx(405.85e9 * 14, rel=0.01)
    assert off.backend_busy_share == 0.0
    assert on.backend_busy_share == pytest.approx(on.burst_s / on.checkpoint_period_s)
    assert off.data_loading_bps < 0.01 * off.checkpoint_mean_bps


def test_moe_instance_beyond_an_nvl72_rack_pays_the_network():
    """A 128-GPU DeepSeek-V3 instance on GB200 spans two NVL72 racks (64-GPU placement domains): its
    expert all-to-all crosses the network (it read 0 when the node count was 128 // 72 = 1)."""
    spec = InferenceSpec(model="deepseek-v3", batch=4096, gpus_per_instance=128)
    r = inference_step(spec, "gb200", NET)
    assert r.needs_backend and r.decode_network_s > 0 and r.decode_nvlink_s == 0


def test_dense_instance_beyond_an_nvl72_rack_pays_its_pipeline_send():
    """A dense instance of 128 GB200 spans two NVL72 racks: one pipeline send per decode step crosses
    the network (it read 0 when the rack count was 128 // 72 = 1); on 8-GPU H100 nodes the same
    instance spans 16 nodes and pays 15 sends."""
    spec = InferenceSpec(model="llama3.1-405b", precision="bf16", batch=64, gpus_per_instance=128)
    gb = inference_step(spec, "gb200", NET)
    send = NET.collective_s("send-recv", 64 * get_model("llama3.1-405b").hidden * 2.0, 2, "network")
    assert gb.needs_backend and gb.decode_network_s == pytest.approx(send)
    h = inference_step(spec, "h100", NET)
    assert h.decode_network_s == pytest.approx(15 * send)
