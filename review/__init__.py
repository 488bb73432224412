"""Expert review: rating queues, assignments, ratings, and the agreement figures built on them.

A new kind of item to rate goes in ``kinds/`` (a ``Kind`` subclass registered there: what is
rated, the form, how ratings feed back); agreement coefficients come from ``stats``. Imports
the apps whose objects it rates (evaluations, rubrics, submissions, metrics_registry) and
tells them about new ratings through ``core.events``.
"""
