"""Workloads: synthetic traffic and flow-file readers (:mod:`aifabric.workload.traffic`), NCCL-style
collectives (:mod:`aifabric.workload.collectives`), training iterations (:mod:`aifabric.workload.training`)."""
