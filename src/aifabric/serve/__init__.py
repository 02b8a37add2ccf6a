"""``aifabric serve``: the decision as a local web page — move an assumption, see the verdict move.

:mod:`aifabric.serve.session` keeps one scenario's measured stages per job and weighs each what-if
again (:func:`aifabric.stages.pipeline.finish`); :mod:`aifabric.serve.controls` generates the page's
controls from the assumption register; :mod:`aifabric.serve.app` is the JSON API and
:mod:`aifabric.serve.page` the page, built from the report's components (:mod:`aifabric.report.html`).
"""
