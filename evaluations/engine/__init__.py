"""The batch engine: many conversations on one event loop per worker process.

A Celery task on the `llm` queue (`llm_process_batch`) takes a batch of conversation ids and
hands it to `process_conversations`, which drives every conversation's steps (the same
generators the per-item worker runs, `evaluations.services.steps`) concurrently on the
process's event loop, with one `AsyncOpenAI` client per endpoint, limits taken in blocks
(`llm.permits`) and every row written in bulk by one recorder on the task's own database
connection (`recorder.BatchRecorder`).
"""

from .runner import BatchReport, process_conversations

__all__ = ["BatchReport", "process_conversations"]
