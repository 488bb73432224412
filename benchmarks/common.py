"""What the benchmark scripts share: best-of timing, scipy's bootstrap as the yardstick, and the
scratch PostgreSQL server (BENCH_POSTGRES) their databases are made on."""

import os
import time

SERVER = os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")


def best_time(func, repeats=3):
    """Best of several runs: the least disturbed by other processes on a shared machine."""
    timings, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        timings.append(time.perf_counter() - start)
    return min(timings), result


def scipy_reference_interval(outcomes, n_resamples: int):
    """scipy.stats.bootstrap's unclustered percentile interval of the mean, and its seconds.

    Batches of 1,000 resamples keep its memory near 0.8 GB on a results-sized data set."""
    import numpy as np
    from scipy import stats

    start = time.perf_counter()
    interval = stats.bootstrap(
        (outcomes,),
        np.mean,
        n_resamples=n_resamples,
        method="percentile",
        vectorized=True,
        batch=1_000,
        random_state=np.random.default_rng(0),
    ).confidence_interval
    return interval, time.perf_counter() - start


def admin_sql(sql: str) -> None:
    """Run `sql` on the server's maintenance database (CREATE and DROP DATABASE)."""
    import psycopg

    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
        conn.execute(sql)
