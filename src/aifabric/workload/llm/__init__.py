"""LLM training step-time model (issue 11): models, GPUs, layouts, compute, communication, search."""
