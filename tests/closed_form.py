"""Closed-form switch counts of non-blocking rail-optimised fabrics, shared by the topology and plan tests."""


def rail_closed_form(gpus: int, radix: int = 64) -> dict[str, int]:
    """1 switch if gpus ≤ radix; 2 tiers up to radix²/2 GPUs (leaves = gpus/(radix/2),
    spines = leaves/2); else 3 tiers (leaves = aggs = gpus/(radix/2), cores = gpus/radix)."""
    if gpus <= radix:
        return {"leaf": 1}
    leaves = gpus // (radix // 2)
    if gpus <= radix * radix // 2:
        return {"leaf": leaves, "spine": leaves // 2}
    return {"leaf": leaves, "spine": leaves, "core": gpus // radix}
