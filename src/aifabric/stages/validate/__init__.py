"""The stage-level checks ``aifabric validate`` prints: routing modes against published results
(:mod:`.routing`), the Ultra Ethernet transport's flow efficiency (:mod:`.uet`) and the job
interruptions each design's redundancy allows (:mod:`.failures`)."""

from aifabric.stages.validate.failures import interruption_table
from aifabric.stages.validate.routing import routing_table
from aifabric.stages.validate.uet import uet_report

__all__ = ["interruption_table", "routing_table", "uet_report"]
