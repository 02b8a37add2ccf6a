"""Workloads: traffic patterns, NCCL-style collectives (:mod:`aifabric.workload.collectives`), training iterations."""
