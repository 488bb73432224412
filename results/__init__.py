"""Published results: pass-rate summaries with intervals, reliability and robustness analyses,
and the public pages and API that read them (Explore, metrics, conversations, the Nutrition
Label, methodology).

Summaries are computed by ``services/`` from the runs' verdicts with the estimators of
``stats`` (a new statistic goes there, with its test against a reference implementation, and
is wrapped into an ``Estimate`` in ``stats/figures.py``). Pages and the API read through
``selectors.py`` and ``public.py``; a new public page is a view in ``views/`` with its
template under ``templates/results/`` and, when it shows published figures, the page cache's
``PublishedPageCacheMixin``. Imports every app below it; nothing imports ``results``.
"""
