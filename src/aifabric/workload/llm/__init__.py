"""LLM training step-time model (issue 11): compute from first principles, MFU as an output,
parallelism as Megatron-Core/NeMo run it, each communication with its true overlap window, a
memory model and a layout search — the network entering only through a ``comm`` object with
``collective_s(op, size_bytes, ranks, span) -> seconds``.

Modules: :mod:`.models` (architectures), :mod:`.gpus` (sourced GPU table), :mod:`.compute`
(per-layer compute, the fitted parameter set), :mod:`.layout` (layouts, framework options, checks),
:mod:`.memory`, :mod:`.step` (the step schedule and breakdown), :mod:`.search` (layout search),
:mod:`.spec` (the scenario's ``training:`` section), :mod:`.network` (the α-β network of a
published cluster, for validation), :mod:`.validation` (published cases), :mod:`.inference` and
:mod:`.storage` (serving and storage traffic).

Typical use (the performance stage, once per fabric)::

    from aifabric.workload.llm import TrainingSpec, plan_training
    spec = TrainingSpec(model="llama3.1-405b", seq_len=8192, global_batch=252, parallelism={"tp": 8})
    result = plan_training(spec, gpu="h100", gpus=576, comm=fabric_comm)
    iteration = result.best.to_dict()   # fabrics[].iteration: iteration_s, mfu, layout, breakdown, ...
"""

from __future__ import annotations

from collections.abc import Mapping

from aifabric.workload.llm.compute import CALIBRATION, Calibration
from aifabric.workload.llm.gpus import GPUS, GpuSpec, get_gpu
from aifabric.workload.llm.inference import InferenceResult, InferenceSpec, inference_step
from aifabric.workload.llm.layout import Framework, Layout
from aifabric.workload.llm.models import MODELS, ModelConfig, get_model, model_from_mapping, resolve_model
from aifabric.workload.llm.network import AlphaBetaNetwork
from aifabric.workload.llm.search import SearchResult, search_layouts
from aifabric.workload.llm.spec import TrainingSpec
from aifabric.workload.llm.step import Breakdown, Collective, StepResult, step_time
from aifabric.workload.llm.storage import StorageTraffic, storage_traffic
from aifabric.workload.llm.validation import validation_table

__all__ = [
    "CALIBRATION",
    "GPUS",
    "MODELS",
    "AlphaBetaNetwork",
    "Breakdown",
    "Calibration",
    "Collective",
    "Framework",
    "GpuSpec",
    "InferenceResult",
    "InferenceSpec",
    "Layout",
    "ModelConfig",
    "SearchResult",
    "StepResult",
    "StorageTraffic",
    "TrainingSpec",
    "get_gpu",
    "get_model",
    "inference_step",
    "model_from_mapping",
    "plan_training",
    "resolve_model",
    "search_layouts",
    "step_time",
    "storage_traffic",
    "validation_table",
]


def plan_training(
    spec: TrainingSpec | Mapping,
    gpu: str | GpuSpec,
    gpus: int,
    comm,
    runners_up: int = 4,
    cal: Calibration = CALIBRATION,
) -> SearchResult:
    """Step time of the ``training:`` section on ``gpus`` GPUs of type ``gpu`` over the fabric that
    ``comm`` times: the layout keys the section leaves open are searched (fastest fitting layout on
    this fabric), the given ones are checked. Raises :class:`~aifabric.errors.InputError` (one line)
    for unknown models/keys, impossible layouts and layouts that do not fit in memory."""
    if not isinstance(spec, TrainingSpec):
        spec = TrainingSpec.model_validate(dict(spec))
    return search_layouts(
        spec.model_config_resolved(),
        get_gpu(gpu),
        int(gpus),
        spec.seq_len,
        spec.global_batch,
        comm,
        precision=spec.precision,
        fixed=spec.fixed_layout(),
        fw=spec.framework.to_framework(),
        cal=cal,
        runners_up=runners_up,
        compute_efficiency=spec.compute_efficiency,
    )
