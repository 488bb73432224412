"""Rubric items, the second benchmark form (HealthBench-style): a conversation ending in a user
message, graded per criterion by an expert-written rubric.

Owns the rubric tables (dimensions, items, criteria, responses, grades, release freezes), the
HealthBench scoring, import and export (our JSONL, HealthBench's, Inspect AI), the grading
prompts, schemas and offline grader, and the replies to rubric items inside evaluation runs,
which it registers with the run machinery as a kind of run work (`evaluations.work`). It sits
above evaluations: it may import core, stats, llm, metrics_registry and evaluations, and none of
them imports it.
"""
