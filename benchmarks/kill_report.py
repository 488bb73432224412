"""The kill campaign's figures per run (`Outcome`) and its printed report
(benchmarks/kill_campaign.py): the table, one line per run, and one summary per kill mode."""

from dataclasses import dataclass


@dataclass
class Outcome:
    label: str
    mode: str
    wall: float
    completed: bool
    requests: int = 0
    at_kill: int = 0
    rows: int = 0
    unknown: int = 0
    billed: int = 0
    logged: int = 0
    done: int = 0
    failed: int = 0
    turn_gaps: int = 0
    judgment_gaps: int = 0
    reaps: int = 0
    dead_replies: int = 0  # replies written whole after the kill to a connection already closed
    dead_tokens: int = 0
    unsent: int = 0  # rows beyond the requests that arrived with their prompt: never received
    answered: int = 0  # tokens of every reply the endpoint produced (what the service bills)
    reconciled: int = 0  # unknown rows the endpoint's stored completions settled as billed
    not_billed: int = 0  # unknown rows it had no completion for: never answered
    logged_after: int = 0  # logged tokens once reconciled
    resets: int = 0  # connections the endpoint saw reset (RST), losing bytes it had not read

    def broken(self) -> list[str]:
        return [
            why
            for bad, why in (
                (not self.completed, "run not completed"),
                (self.requests != self.rows, "requests != HTTP rows"),
                (self.logged > self.billed, "logged tokens > billed"),
                (self.turn_gaps, "a completed conversation misses a turn"),
                (self.judgment_gaps, "a completed conversation misses a judgment"),
            )
            if bad
        ]


def report_print(outcomes: list[Outcome]) -> None:
    baseline = outcomes[0].wall or 1.0
    head = (
        f"{'run':10} {'at kill':>7} {'requests':>8} {'HTTP rows':>9} {'unknown':>7} {'unsent':>6} "
        f"{'billed tok':>10} {'logged tok':>10} {'gap':>7} {'gap %':>6} {'to dead':>11} "
        f"{'done':>5} {'failed':>6} {'turn gaps':>9} {'judg gaps':>9} {'wall s':>7} {'× base':>6} "
        f"{'reaps':>5} {'reconc':>6} {'not bill':>8} {'answered':>9} {'logged after':>12} "
        f"{'gap after':>9}"
    )
    print("\n" + head + "\n" + "-" * len(head))
    for o in outcomes:
        gap = o.billed - o.logged
        print(
            f"{o.label:10} {o.at_kill:7d} {o.requests:8d} {o.rows:9d} {o.unknown:7d} {o.unsent:6d} "
            f"{o.billed:10d} {o.logged:10d} {gap:7d} {gap / max(1, o.billed):6.2%} "
            f"{f'{o.dead_replies}/{o.dead_tokens}':>11} {o.done:5d} {o.failed:6d} "
            f"{o.turn_gaps:9d} {o.judgment_gaps:9d} "
            f"{o.wall:7.1f} {o.wall / baseline:6.2f} {o.reaps:5d} {o.reconciled:6d} "
            f"{o.not_billed:8d} {o.answered:9d} {o.logged_after:12d} "
            f"{o.answered - o.logged_after:9d}" + ("" if o.completed else "  NOT COMPLETED")
        )
    print()
    for mode in ("none", "one", "all"):
        group = [o for o in outcomes if o.mode == mode]
        if not group:
            continue
        equal = sum(o.requests == o.rows for o in group)
        gap = sum(o.billed - o.logged for o in group)
        billed = sum(o.billed for o in group)
        walls = [o.wall / baseline for o in group]
        dead = sum(o.dead_tokens for o in group)
        broken = sorted({why for o in group for why in o.broken()})
        print(
            f"{mode:4} kill(s): {len(group)} run(s); requests = HTTP rows in {equal}/{len(group)}; "
            f"{sum(o.unknown for o in group)} unknown rows, {sum(o.unsent for o in group)} "
            f"of them never received ({sum(o.resets for o in group)} connections reset); "
            "logged tokens "
            f"{billed - gap} of {billed} billed (gap {gap}, {gap / max(1, billed):.2%}: "
            f"{dead} in {sum(o.dead_replies for o in group)} replies written after the kill to "
            f"a dead worker's connection, {gap - dead} before the kill or its sight); "
            f"{sum(o.done for o in group)} done, {sum(o.failed for o in group)} failed, "
            f"{sum(o.turn_gaps + o.judgment_gaps for o in group)} incomplete; wall "
            f"{min(walls):.2f}-{max(walls):.2f}× baseline; after reconciliation "
            f"({sum(o.reconciled for o in group)} reconciled, "
            f"{sum(o.not_billed for o in group)} not billed): logged "
            f"{sum(o.logged_after for o in group)} of {sum(o.answered for o in group)} tokens "
            f"answered (gap {sum(o.answered - o.logged_after for o in group)}); "
            + ("OK" if not broken else "BROKEN: " + ", ".join(broken))
        )
