"""Workloads: synthetic traffic and flow-file readers (:mod:`aifabric.workload.traffic`), NCCL-style
collectives (:mod:`aifabric.workload.collectives`), the LLM training step model (:mod:`aifabric.workload.llm`)."""
