"""Simulator fidelity of two simulators on the same scenarios: the offline simulated user and a
real small model (SmolLM2-135M-Instruct through llama-cpp-python's OpenAI-compatible server,
configured with `configure_model` as a newcomer would). Target, judge and fidelity checker are
the offline demo models in both runs, so only the simulator differs. Prints, per simulator, the
share of conversations meeting the fidelity bar and the share holding each criterion, each with
its interval and n, and a few of the real model's failed criteria with their reasons.

    .venv/bin/python benchmarks/simulator_fidelity.py               # starts the server itself
    .venv/bin/python benchmarks/simulator_fidelity.py --base-url http://127.0.0.1:18630/v1

About 4 tokens/s on 2 cores: each of the real model's turns takes 10-20 s, so the default (two
metrics, six scenarios each, four turns) takes 10-20 minutes.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_model import MODEL_ALIAS, manage, server_start  # noqa: E402

OFFLINE = {
    "target": "Offline target: careful",
    "judge": "Offline judge",
    "simulator": "Offline user simulator",
}
REPORT = """
import json
from evaluations.models import EvaluationRun, FidelityReading
from results.services.fidelity import fidelity_figures
runs = list(EvaluationRun.objects.filter(name__startswith="fidelity ").order_by("pk"))
figures = fidelity_figures(runs=runs, n_resamples=200)
failed = [
    [r.conversation.run.simulator.name, e["criterion"], e["turn"], e["quote"][:160], e["reason"]]
    for r in FidelityReading.objects.filter(conversation__run__in=runs).select_related(
        "conversation__run__simulator"
    )
    for e in r.criteria
    if not e["held"]
]
print(json.dumps({"figures": figures["simulators"], "failed": failed}))
"""


def _estimate(figure: dict) -> str:
    value, low, high = figure.get("value"), figure.get("low"), figure.get("high")
    if value is None:
        return f"n/a ({figure.get('reason')})"
    if low is None:
        return f"{100 * value:5.1f} % (no interval) n={figure.get('n')}"
    return f"{100 * value:5.1f} % [{100 * low:4.1f}, {100 * high:4.1f}] n={figure.get('n')}"


def run(base_url: str, metrics: str, turns: int, max_tokens: int) -> dict:
    scratch = tempfile.mkdtemp(prefix="simulator-fidelity-")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.local",
        "IMPACTBENCH_VAR_DIR": scratch,
        "DATABASE_URL": f"sqlite:///{scratch}/db.sqlite3",
        "CELERY_BROKER_URL": "filesystem://",
        "DEMO_SEED_EVALUATIONS": "false",
        "LLM_TIMEOUT_SECONDS": "600",
        "LLM_LIMIT_MAX_WAIT_SECONDS": "7200",
    }
    try:
        manage(env, "migrate", "-v0")
        manage(env, "seed_demo")
        manage(env, "shell", "-c", "from evaluations.demo import demo_scenarios_seed as s; s()")
        manage(
            env, "configure_model", "--name", "SmolLM2", "--base-url", base_url,
            "--model-id", MODEL_ALIAS, "--api-key-env", "", "--roles", "user_simulator",
            "--max-tokens", str(max_tokens), "--max-concurrency", "1",
        )  # fmt: skip
        seconds = {}
        for simulator in (OFFLINE["simulator"], "SmolLM2"):
            started = time.monotonic()
            manage(
                env, "run_evaluation", "--metrics", metrics, "--targets", OFFLINE["target"],
                "--simulator", simulator, "--judge", OFFLINE["judge"], "--turns", str(turns),
                "--judgments", "1", "--seed", "7", "--inline", "--yes",
                "--name", f"fidelity {simulator}",
            )  # fmt: skip
            seconds[simulator] = time.monotonic() - started
        report = json.loads(manage(env, "shell", "-c", REPORT).strip().splitlines()[-1])
        return {**report, "seconds": seconds}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="A running server; default: start one.")
    parser.add_argument("--python", help="Python of a llama-cpp-python install.")
    parser.add_argument("--gguf", help="The model file.")
    parser.add_argument("--metrics", default="IB-M-00001,IB-M-00002", help="Demo metric keys.")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    process = None
    base_url = args.base_url
    if not base_url:
        process, base_url = server_start(args)
    try:
        result = run(base_url, args.metrics, args.turns, args.max_tokens)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
    for figure in result["figures"]:
        name = figure["simulator"]
        print(f"{name} ({result['seconds'].get(name, 0):.0f} s):")
        print(f"  meets the fidelity bar   {_estimate(figure['meets_bar'])}")
        for criterion in figure["criteria"]:
            print(f"  {criterion['criterion']:<24} {_estimate(criterion['held'])}")
        excluded = ", ".join(f"{e['reason']}: {e['count']}" for e in figure["excluded"])
        print(f"  excluded: {excluded or 'none'}")
    print("Failed criteria (first 8 of the real model's):")
    for _simulator, criterion, turn, quote, reason in [
        f for f in result["failed"] if f[0] == "SmolLM2"
    ][:8]:
        print(f"  {criterion} at turn {turn}: {quote!r} — {reason}")


if __name__ == "__main__":
    main()
