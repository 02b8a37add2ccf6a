"""The NIC's achieved efficiency, one value for every model that moves NCCL traffic over a NIC
(the ``collective`` command's NIC cap, the main job's collective times, the step model's
validation network); kept here, free of heavy imports, so each of them can read it.

Per-NIC achieved efficiency: the bytes a NIC moves per second (on the wire, headers counted) over
its line rate, as NCCL moves them; payload is this × MTU / (MTU + headers). nccl-tests, 2 nodes,
NCCL_ALGO=RING: 46–48 GB/s per NDR 400 Gb/s NIC = 0.92–0.96 of 50 GB/s (hardware-facts §G.3 [S4],
NVIDIA/nccl-tests#290); HDR 200 Gb/s ~24 GB/s = 0.96 of 25 ([S83][S84]). The middle of the NDR
range; the same value for every fabric and rate (no public per-rate or per-transport figure beyond
these; ``aifabric calibrate`` fits the user's own).
"""

NIC_EFFICIENCY = 0.94
NIC_EFFICIENCY_SOURCE = "0.94: nccl-tests 46–48 GB/s per 400G NIC (hardware-facts §G.3 [S4])"
