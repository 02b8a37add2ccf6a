"""Built-in model configurations, FLOPs convention, mapping form, GPU table and the training spec."""

import pytest
from pydantic import ValidationError

from aifabric.errors import InputError
from aifabric.workload.llm.gpus import GPUS, get_gpu
from aifabric.workload.llm.models import MODELS, get_model, model_from_mapping
from aifabric.workload.llm.spec import TrainingSpec


@pytest.mark.parametrize(
    ("name", "seq", "flops_per_sample"),
    [("llama3.1-8b", 8192, 4.74e14), ("llama3.1-70b", 8192, 3.94e15), ("gpt3-175b", 2048, 2.20e15)],
)
def test_model_flops_match_nvidia_convention(name, seq, flops_per_sample):
    """Model FLOPs per sample equal the numbers NVIDIA's benchmarks print (published-training.md)."""
    m = get_model(name)
    assert m.model_flops_per_token(seq) * seq == pytest.approx(flops_per_sample, rel=0.01)


@pytest.mark.parametrize(
    ("name", "total_b", "active_b"),
    [
        ("llama3.1-8b", 8.03, 8.03),
        ("llama3.1-70b", 70.6, 70.6),
        ("llama3.1-405b", 405.9, 405.9),
        ("deepseek-v3", 671.0, 37.5),
        ("mixtral-8x7b", 46.7, 12.9),
        ("mixtral-8x22b", 140.6, 39.2),
        ("qwen3-235b-a22b", 235.1, 22.2),
        ("qwen3-32b", 32.8, 32.8),
        ("nemotron4-340b", 341.0, 341.0),
    ],
)
def test_parameter_counts_match_published_sizes(name, total_b, active_b):
    """Total and active parameters computed from the config match the models' published sizes."""
    m = get_model(name)
    assert m.total_params / 1e9 == pytest.approx(total_b, rel=0.02)
    assert m.active_params / 1e9 == pytest.approx(active_b, rel=0.02)


def test_old_names_are_aliases():
    """Today's llama3-* names resolve to the Llama 3.1 configs."""
    assert get_model("llama3-70b") is MODELS["llama3.1-70b"]
    assert get_model("LLAMA3-405B") is MODELS["llama3.1-405b"]


def test_unknown_model_names_the_allowed_ones():
    """An unknown model name is one line naming the field and the built-in names."""
    with pytest.raises(InputError) as e:
        get_model("llama9")
    assert "training.model" in str(e.value) and "llama3.1-70b" in str(e.value) and "\n" not in str(e.value)


def test_mapping_builds_a_moe_model_and_rejects_unknown_keys():
    """The mapping form takes the interface keys; an unknown key is an error naming it."""
    m = model_from_mapping(
        {
            "layers": 4,
            "hidden": 512,
            "ffn_hidden": 2048,
            "heads": 8,
            "kv_heads": 2,
            "vocab": 1000,
            "experts": 8,
            "experts_per_token": 2,
            "moe_ffn_hidden": 256,
            "shared_experts": 1,
        }
    )
    assert m.is_moe and m.moe_layers == 4 and m.active_params < m.total_params
    with pytest.raises(InputError, match=r"training\.model\.hiden"):
        model_from_mapping({"layers": 4, "hiden": 512})
    with pytest.raises(InputError, match="experts_per_token and moe_ffn_hidden"):
        model_from_mapping(
            {
                "layers": 2,
                "hidden": 64,
                "ffn_hidden": 128,
                "heads": 4,
                "kv_heads": 4,
                "vocab": 10,
                "experts": 4,
            }
        )


def test_every_gpu_has_a_source_and_nvl72_domains():
    """Each GPU row names its sources; GB200/GB300 form a 72-GPU NVLink domain, H800 has 200 GB/s."""
    for gpu in GPUS.values():
        assert gpu.sources
    assert get_gpu("gb200").nvlink_domain_gpus == 72 and get_gpu("gb200").placement_domain_gpus == 64
    assert get_gpu("h800").nvlink_bytes_per_s == pytest.approx(200e9)
    assert get_gpu("H100-SXM").name == "h100"
    with pytest.raises(InputError, match="advisor.gpu"):
        get_gpu("a100")


def test_training_spec_interface_example_and_unknown_keys():
    """The interface.md example parses; open keys are searched; unknown keys and bad values are rejected."""
    spec = TrainingSpec.model_validate(
        {
            "model": "llama3.1-405b",
            "precision": "bf16",
            "seq_len": 8192,
            "global_batch": 252,
            "micro_batch": 1,
            "parallelism": {"tp": 8, "pp": 9, "cp": 2, "vp": 7},
        }
    )
    assert spec.fixed_layout() == {"tp": 8, "pp": 9, "cp": 2, "vp": 7, "micro_batch": 1}
    with pytest.raises(ValidationError):
        TrainingSpec.model_validate({"model": "llama3.1-8b", "paralelism": {}})
    with pytest.raises(ValidationError):
        TrainingSpec.model_validate({"model": "llama3.1-8b", "precision": "fp16"})
    with pytest.raises(ValidationError, match="training.model.bogus"):
        TrainingSpec.model_validate({"model": {"layers": 2, "bogus": 1}})
    with pytest.raises(ValidationError):
        spec.seq_len = 4096  # frozen
