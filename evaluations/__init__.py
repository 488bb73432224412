"""Evaluation runs: scenarios, simulated conversations, judge verdicts, anchors, and the batch
engine that drives them.

Owns scenarios, runs, conversations, turns, judgments and anchor coverage, and the run
machinery every kind of run work goes through: claims with leases and fencing tokens, the
reaper, retries and failures (``services/failures.py``), plans and costs, the engine
(``engine/``). Other kinds of run work (the rubrics app's replies to rubric items) register a
``RunWorkKind`` in ``work.py``. Imports ``core``, ``stats``, ``llm`` and ``metrics_registry``;
never an app above it.
"""
