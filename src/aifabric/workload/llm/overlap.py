"""Communication overlap as the frameworks configure it: Transformer Engine's tensor-parallel
overlap *per GEMM and method*, and the DP and PP overlaps of Megatron-Core, with presets named after
the public recipes they come from.

**TP overlap per GEMM** (Transformer Engine userbuffers, ``transformer_engine/pytorch/module/base.py``
``initialize_ub``; NeMo's per-recipe tables, ``NVIDIA/NeMo``
``nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py`` @0594a700). With sequence
parallelism each layer has, per micro-batch, an all-gather before the QKV and FC1 GEMMs and a
reduce-scatter after the attention-projection and FC2 GEMMs (forward), and the same count backward:
an all-gather of the output gradient before the projection and FC2 data-gradient GEMMs, a
reduce-scatter of the QKV and FC1 data gradients (overlapped with their weight-gradient GEMMs). Each
of these eight slots has a method; a slot's exposed time, for a collective of ``t`` seconds and the
GEMM ``g`` it overlaps with (``n`` = TP size, ``s`` = splits, ``k`` = SMs the communication holds of
the GPU's ``S``):

* ``none``: t (exposed in full);
* ``ring_exchange`` (GEMM split in n chunks, one peer-to-peer step each, copy engines, no SMs):
  max(0, t − g · (n − 1)/n) — the first chunk computes on local data; ``aggregate`` exchanges two
  chunks a step (n/2 steps);
* ``pipeline`` (reduce-scatter after each of s GEMM chunks, on k SMs): t/s + (s − 1)/s · max(0,
  t − g), the last chunk's reduce-scatter exposed, + the GEMM on S − k SMs: g · k/(S − k);
* ``bulk`` (the collective runs beside an independent GEMM on k SMs): max(0, t − g) + the SMs it
  takes while both run: min(t, g) · k/S (g · k/(S − k) with ``set_sm_margin``).

MoE layers overlap only the attention half: their experts run Transformer Engine's GroupedLinear,
which has no userbuffers overlap. Methods, splits and SM counts are the recipes'; the GEMM times are the model's own per-shape times.
One parameter is fitted: the share of the *hidden* communication time that still costs
(``Calibration.tp_overlap_interference``: chunked GEMMs run smaller shapes, and a GEMM and a
collective share HBM, L2 and the SMs' issue slots), on one published case (validation.py). Not counted: the backward re-gather of the QKV/FC1 inputs for their
weight gradients (TE's ``qkv_dgrad``/``fc1_dgrad`` bulk slots; the step model has never counted that
collective) and the memory-bandwidth contention between a GEMM and a concurrent collective.
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.errors import InputError

METHODS = ("none", "bulk", "ring_exchange", "pipeline")
#: the eight TP collectives of a layer (forward 4, backward 4), with the GEMM each overlaps with
SLOTS = (
    "qkv_fprop",
    "proj_fprop",
    "fc1_fprop",
    "fc2_fprop",
    "proj_dgrad",
    "fc2_dgrad",
    "qkv_wgrad",
    "fc1_wgrad",
)

#: the MLP half of the table, which MoE layers do not overlap (their experts are TE GroupedLinear)
MOE_MLP_SLOTS = ("fc1_fprop", "fc2_fprop", "fc2_dgrad", "fc1_wgrad")

UB_FILE = "NVIDIA/NeMo nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py @0594a700"
TE_BASE = "NVIDIA/TransformerEngine transformer_engine/pytorch/module/base.py initialize_ub (defaults)"


@dataclass(frozen=True)
class Slot:
    """One TP collective's overlap: method, SMs the communication holds, splits, SM margin."""

    method: str = "none"
    num_sm: int = 0
    splits: int = 4
    set_sm_margin: bool = False
    aggregate: bool = False


RING, RING_AGG = Slot("ring_exchange", 1), Slot("ring_exchange", 1, aggregate=True)


def _pipe(sm: int) -> Slot:
    return Slot("pipeline", sm, 4, True)


def _bulk(sm: int, margin: bool = False) -> Slot:
    return Slot("bulk", sm, 0, margin)


def _table(qkv_w: Slot, fc1_w: Slot, proj_f: Slot, fc2_f: Slot, ring: Slot = RING) -> dict[str, Slot]:
    return {"qkv_fprop": ring, "fc1_fprop": ring, "proj_dgrad": ring, "fc2_dgrad": ring,
            "qkv_wgrad": qkv_w, "fc1_wgrad": fc1_w, "proj_fprop": proj_f, "fc2_fprop": fc2_f}  # fmt: skip


#: TP overlap tables: name → (source, slot → Slot)
TP_TABLES: dict[str, tuple[str, dict[str, Slot]]] = {
    "none": ("no TP-communication overlap", dict.fromkeys(SLOTS, Slot())),
    "te-default": (TE_BASE + ": ring_exchange 1 SM, pipeline/bulk 16 SMs with SM margin, 4 splits",
                   _table(_bulk(16, True), _bulk(16, True), _pipe(16), _pipe(16))),
    "nemo-h100-h8192-tp4": (UB_FILE + " userbuffers_{bf16,fp8}_h100_h8192_tp4_mbs1_seqlen8192 (Llama 3 70B)",
                            _table(_bulk(24), _bulk(4), _pipe(24), _pipe(16))),
    "nemo-h100-h16384-tp8-cp2": (UB_FILE + " userbuffers_{bf16,fp8}_h100_h16384_tp8_cp2_mbs1_seqlen8192 (Llama 3.1 405B)",
                                 _table(_bulk(24), _bulk(2), _pipe(24), _pipe(8), RING_AGG)),
    "nemo-h100-h12288-tp4": (UB_FILE + " userbuffers_{bf16,fp8}_h100_h12288_tp4_mbs1_seqlen2048 (GPT-3 175B)",
                             _table(_bulk(4), _bulk(4), _pipe(24), RING)),
    "nemo-b200-h12288-tp4": (UB_FILE + " userbuffers_{bf16,fp8}_b200_h12288_tp4_mbs1_seqlen2048 (GPT-3 175B)",
                             _table(_bulk(16), _bulk(8), RING, RING)),
    "nemo-b200-h16384-tp4-cp2-bf16": (UB_FILE + " userbuffers_bf16_b200_h16384_tp4_cp2_mbs1_seqlen8192 (Llama 3.1 405B)",
                                      _table(_bulk(24), _bulk(2), _pipe(32), _pipe(8), RING_AGG)),
    "nemo-b200-h16384-tp4-cp2-fp8": (UB_FILE + " userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192 (Llama 3.1 405B)",
                                     _table(_bulk(32), _bulk(8), RING, RING, RING_AGG)),
}  # fmt: skip


def slot_exposed(slot: Slot, t: float, g: float, tp: int, sms: int, interference: float = 0.0) -> float:
    """Exposed seconds of one TP collective of ``t`` s overlapped by ``slot`` with a GEMM of ``g`` s
    (module doc); ``interference`` of the hidden part still costs (the fitted share of
    ``Calibration.tp_overlap_interference``)."""
    if slot.method == "none" or t <= 0:
        return max(t, 0.0)
    if slot.method == "ring_exchange":
        n = max(tp // 2, 1) if slot.aggregate else tp
        comm, sm_cost = max(0.0, t - g * (n - 1) / n), 0.0
    else:
        sm_cost = (
            g * slot.num_sm / (sms - slot.num_sm) if slot.set_sm_margin else min(t, g) * slot.num_sm / sms
        )
        s = max(slot.splits, 1)
        comm = t / s + (s - 1) / s * max(0.0, t - g) if slot.method == "pipeline" else max(0.0, t - g)
    return comm + interference * (t - comm) + sm_cost


def tp_table(name: str) -> dict[str, Slot]:
    if name not in TP_TABLES:
        raise InputError("unknown TP overlap table", field="training.overlap.tp", value=name,
                         allowed="false, " + ", ".join(t for t in TP_TABLES if t != "none"))  # fmt: skip
    return TP_TABLES[name][1]


@dataclass(frozen=True)
class Preset:
    """A named overlap setting: TP table, DP overlaps, PP overlap (None = with interleaving)."""

    source: str
    tp: str = "none"
    grad_reduce: bool = True
    param_gather: bool = True
    p2p: bool | None = None


MCORE = (
    "Megatron-Core distributed optimizer with --overlap-grad-reduce --overlap-param-gather (NVIDIA/Megatron-LM "
    "megatron/training/arguments.py); P2P overlapped in the interleaved schedule"
)
DEFAULT_PRESET = "megatron-core"
PRESETS: dict[str, Preset] = {
    "none": Preset("nothing overlapped: TP, DP and PP communication exposed in full", "none", False, False, False),
    "megatron-core": Preset(MCORE + "; no TP-communication overlap (the default)"),
    "te-default": Preset(MCORE + "; --tp-comm-overlap with Transformer Engine's default methods", "te-default"),
    "nemo-llama3-70b-h100": Preset("NeMo llama3_70b recipe (MegatronCommOverlapCallback) + " + MCORE,
                                   "nemo-h100-h8192-tp4"),
    "nemo-llama31-405b-h100": Preset("NeMo llama31_405b recipe + " + MCORE, "nemo-h100-h16384-tp8-cp2"),
    "nemo-gpt3-175b-h100": Preset("NeMo gpt3_175b recipe + " + MCORE, "nemo-h100-h12288-tp4"),
    "nemo-gpt3-175b-b200": Preset("NeMo gpt3_175b recipe, B200 table + " + MCORE, "nemo-b200-h12288-tp4"),
    "nemo-llama31-405b-b200-bf16": Preset("NeMo llama31_405b recipe, B200 BF16 table + " + MCORE,
                                          "nemo-b200-h16384-tp4-cp2-bf16"),
    "nemo-llama31-405b-b200-fp8": Preset("NeMo llama31_405b recipe, B200 FP8 table + " + MCORE,
                                         "nemo-b200-h16384-tp4-cp2-fp8"),
}  # fmt: skip
OVERLAP_KEYS = ("preset", "tp", "grad_reduce", "param_gather", "p2p")


def resolve_overlap(value) -> Preset:
    """``training.overlap``: a preset name, or a mapping of :data:`OVERLAP_KEYS` (``preset`` first, the
    other keys replace its fields; ``tp`` is ``false``, ``true`` (TE's defaults) or a table name)."""
    field = "training.overlap"
    allowed = ", ".join(PRESETS)
    if isinstance(value, str):
        if value not in PRESETS:
            raise InputError("unknown overlap preset", field=field, value=value, allowed=allowed)
        return PRESETS[value]
    if not isinstance(value, dict):
        raise InputError("must be a preset name or a mapping", field=field, value=value, allowed=allowed)
    bad = [k for k in value if k not in OVERLAP_KEYS]
    if bad:
        raise InputError(
            "unknown key", field=f"{field}.{bad[0]}", value=bad[0], allowed=", ".join(OVERLAP_KEYS)
        )
    base = resolve_overlap(value.get("preset", DEFAULT_PRESET))
    tp = value.get("tp", base.tp)
    tp = {True: "te-default", False: "none"}.get(tp, tp) if isinstance(tp, bool) else tp
    tp_table(str(tp))
    out = {"tp": tp}
    for key in ("grad_reduce", "param_gather", "p2p"):
        v = value.get(key, getattr(base, key))
        if not (isinstance(v, bool) or (key == "p2p" and v is None)):
            raise InputError("must be true or false", field=f"{field}.{key}", value=v, allowed="true, false")
        out[key] = v
    return Preset(
        f"{base.source}; changed: {', '.join(k for k in value if k != 'preset') or 'nothing'}", **out
    )


def overlap_flags(preset: Preset) -> dict:
    """The :class:`~aifabric.workload.llm.layout.Framework` fields a preset sets."""
    flags = {
        "tp_comm_overlap": preset.tp != "none",
        "overlap_grad_reduce": preset.grad_reduce,
        "overlap_param_gather": preset.param_gather,
        "overlap_p2p": preset.p2p,
    }
    if preset.tp != "none":
        flags["tp_overlap"] = preset.tp
    return flags
