"""Stage 3, *measure*: each designed fabric × the job's traffic → :class:`NetworkEvidence` (achieved
bandwidth and latency per pattern; cached). :mod:`.network` runs the stage; its parts are the flow-level
runs on the rail topology (:mod:`.flows`), the expert all-to-all (:mod:`.expert`), the job's placed
patterns (:mod:`.placed`), NCCL's constants (:mod:`.nccl`) and SHARP's grant (:mod:`.sharp`)."""

from aifabric.stages.measure.network import (
    HEADER_BYTES,
    MTU_BYTES,
    FabricNetwork,
    NetworkEvidence,
    measure,
    measure_fabric,
    routed_efficiency,
)

__all__ = [
    "HEADER_BYTES",
    "MTU_BYTES",
    "FabricNetwork",
    "NetworkEvidence",
    "measure",
    "measure_fabric",
    "routed_efficiency",
]
