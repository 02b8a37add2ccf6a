"""Design-space studies (``aifabric sweep``): a base scenario, axes over dotted scenario keys, and
every point run locally (process pool) or on Ray, with results in DuckDB over Parquet.

- :mod:`~aifabric.sweep.study` — study files → validated points (grid, list, random/LHS sample)
- :mod:`~aifabric.sweep.commands` — the table of what a point runs (compare, train, simulate,
  collective) and the rows it stores
- :mod:`~aifabric.sweep.runner` — local and Ray executors, retries, progress, :func:`run_study`
- :mod:`~aifabric.sweep.store` — the results database (append-only Parquet, resumable)
- :mod:`~aifabric.sweep.query` — ``aifabric results``: SQL, filters, CSV
- :mod:`~aifabric.sweep.report` — the study report (Pareto, heat maps, flips, seed intervals)
"""
