"""Running totals of each run's call log, so a run's usage figures cost O(1) to read.

The live run page polls a run's usage (attempts, outcomes, tokens, cost, waits) every few
seconds; summing the call log for it reads every attempt of the run, about a million rows for
a full release. These rows hold the same sums, kept by database triggers on `llm_llmcall`
(migration `llm/0011`): every INSERT, UPDATE and DELETE of attempts adds its difference in the
statement that made it, inside its transaction, whoever wrote it (the engine's bulk writes,
`write_now`, the journal replay, a re-written batch, an admin deleting rows). Triggers rather
than the recorder's own writes because only the database knows which rows of an
`ON CONFLICT DO NOTHING / DO UPDATE` insert were new: a batch written again after a commit that
had applied must add nothing.

On PostgreSQL each connection adds to its own row of the run (`shard`, its backend pid modulo
`USAGE_SHARDS`), so workers writing batches of one run at once do not queue on one row lock
until commit; a run's figures are the sum of its (at most `USAGE_SHARDS`) rows. SQLite has one
writer and one row per run. Cost is kept in units of 1e-8 (the call log's 8 decimal places) so
the sum is exact on SQLite too, where decimals are floats.

The triggers spell out the outcomes counted as successes, failures, cache hits and rate
limits; a change to `CallOutcome`/`ERROR_OUTCOMES` needs a migration that redefines them (the
tests compare these rows with a fresh sum over the call log for every outcome).
"""

from django.db import models

USAGE_SHARDS = 16
COST_UNITS_PER_DOLLAR = 10**8


class RunUsageTotal(models.Model):
    """Sums over the attempts of one run written through one shard (see the module docstring)."""

    run_id = models.BigIntegerField()
    shard = models.SmallIntegerField(default=0)
    # Signed: a shard's row may go below zero when another connection deletes attempts it
    # added; the run's sum over its shards is what is exact.
    attempts = models.BigIntegerField(default=0)
    successes = models.BigIntegerField(default=0)
    failures = models.BigIntegerField(default=0)
    cache_hits = models.BigIntegerField(default=0)
    rate_limited = models.BigIntegerField(default=0)
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    cost_units = models.BigIntegerField(default=0, help_text="Cost in units of 1e-8 dollars.")
    limit_wait_ms = models.BigIntegerField(default=0)
    backoff_ms = models.BigIntegerField(default=0)
    # The attempt with the highest id among this shard's attempts that backed off, for "waiting
    # N s before retrying" without searching the log.
    latest_backoff_id = models.BigIntegerField(null=True, blank=True)
    latest_backoff_at = models.DateTimeField(null=True, blank=True)
    latest_backoff_ms = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run_id", "shard"], name="llm_run_usage_shard"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} shard {self.shard}: {self.attempts} attempts"
