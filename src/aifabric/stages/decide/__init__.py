"""Stage 6, *decide*: all the evidence → :class:`Decision` (recommendation, reasons, claims).

:mod:`.choose` runs the stage: the risk-adjusted cost per useful token (:mod:`.objective`), the
latency-critical check (:mod:`.latency`), the reasons (:mod:`.explain`) and the verdict across the
alternatives (:mod:`.verdict`); :mod:`.decision` holds the result's types and :mod:`.assumptions` the
register of every assumption that reached the verdict."""

from aifabric.stages.decide.assumptions import Assumption, register
from aifabric.stages.decide.choose import Decision, decide
from aifabric.stages.decide.verdict import Alternative, hinge

__all__ = ["Alternative", "Assumption", "Decision", "decide", "hinge", "register"]
