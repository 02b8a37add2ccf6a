"""The main job (``aifabric compare``) as a chain of stages; :mod:`.pipeline` only chains them.

One sub-package or module per stage, in the order they run (each imports only earlier stages and
the layers below ``stages``; import-linter checks it): :mod:`.design`, :mod:`.workload`,
:mod:`.measure`, :mod:`.performance`, :mod:`.risk`, :mod:`.decide`. :mod:`.deployment` holds the
categorical settings every stage reads; :mod:`.validate` the stage-level checks ``aifabric validate``
prints; :mod:`.cache` and :mod:`.workers` the measurement cache and the worker pool the stages share.
"""
