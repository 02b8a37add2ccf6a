"""``aifabric calibrate``: read a user's nccl-tests / perftest output, fit the model's NIC
efficiency, latency and pipeline terms on the sizes ≤ ``--fit-max-bytes``, report how the held-out
larger sizes are predicted, and write a calibration file that ``compare`` and ``collective``
apply (``--calibration``). Modules: :mod:`.parsers`, :mod:`.model`, :mod:`.fit`,
:mod:`.calibration`, :mod:`.report`."""

from aifabric.calibrate.calibration import (
    Calibration,
    calibrate_fabric,
    calibrate_scenario,
    calibrate_sweep,
    load,
)
from aifabric.calibrate.fit import DEFAULT_FIT_MAX_BYTES, FitResult, fit_nccl, fit_perftest
from aifabric.calibrate.parsers import parse_measurement

__all__ = [
    "DEFAULT_FIT_MAX_BYTES",
    "Calibration",
    "FitResult",
    "calibrate_fabric",
    "calibrate_scenario",
    "calibrate_sweep",
    "fit_nccl",
    "fit_perftest",
    "load",
    "parse_measurement",
]
