"""A real small model through the default configuration path: SmolLM2-135M-Instruct served by
llama-cpp-python's OpenAI-compatible server, configured with `configure_model` and no
structured-output option (as a newcomer would; one request at a time, short replies), playing
simulator, target and judge for one
metric at one turn. Prints how many of the metric's conversations completed, PASS at ≥ 5 of 6.

    .venv/bin/python benchmarks/real_model.py                 # starts the server itself
    .venv/bin/python benchmarks/real_model.py --base-url http://127.0.0.1:18630/v1

The server comes from ../shared/realmodel (setup.sh, serve.py), or from the python and GGUF
given with --python/--gguf (a llama-cpp-python built on this machine). The run uses a scratch
SQLite database under a temporary folder with the demo's metrics and scenarios (no demo run).
About 4 tokens/s on 2 cores: the configuration's max_tokens is kept small.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# ../shared/realmodel beside the checkout (or beside the folder of worktrees holding it).
SHARED = next(
    (p / "shared" / "realmodel" for p in ROOT.parents if (p / "shared" / "realmodel").is_dir()),
    ROOT.parent / "shared" / "realmodel",
)
MODEL_ALIAS = "smollm2-135m"
TARGET_COMPLETED = 5


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _setup(args) -> tuple[str, str]:
    if args.python and args.gguf:
        return args.python, args.gguf
    out = subprocess.run(  # noqa: S603 - the project's own setup script
        [str(SHARED / "setup.sh")], capture_output=True, text=True, check=True
    ).stdout.split()
    return out[0], out[1]


def server_start(args) -> tuple[subprocess.Popen, str]:
    python, gguf = _setup(args)
    port = _free_port()
    log = open(Path(tempfile.gettempdir()) / f"real-model-server-{port}.log", "w")  # noqa: SIM115
    process = subprocess.Popen(  # noqa: S603 - our arguments, no shell
        [
            python, str(SHARED / "serve.py"), "--model", gguf, "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"The model server exited ({process.returncode}); see {log.name}.")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as reply:  # noqa: S310
                if MODEL_ALIAS in reply.read().decode():
                    return process, base_url
        except OSError:
            time.sleep(1)
    process.terminate()
    raise SystemExit(f"The model server did not answer within 120 s; see {log.name}.")


def manage(env: dict, *arguments: str) -> str:
    result = subprocess.run(  # noqa: S603 - our arguments, no shell
        [sys.executable, str(ROOT / "manage.py"), *arguments],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if result.returncode:
        raise SystemExit(f"manage.py {arguments[0]} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def run(base_url: str, metric: str, max_tokens: int) -> dict:
    """Configure the model three times over and run one metric at one turn; the counts."""
    scratch = tempfile.mkdtemp(prefix="real-model-")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.local",
        "IMPACTBENCH_VAR_DIR": scratch,
        "DATABASE_URL": f"sqlite:///{scratch}/db.sqlite3",
        "CELERY_BROKER_URL": "filesystem://",
        "DEMO_SEED_EVALUATIONS": "false",
        # One request at a time (the server answers one at a time): the platform queues the
        # rest under the configuration's limit instead of letting them time out at the server.
        "LLM_TIMEOUT_SECONDS": "600",
        "LLM_LIMIT_MAX_WAIT_SECONDS": "7200",
    }
    try:
        manage(env, "migrate", "-v0")
        manage(env, "seed_demo")
        # The demo's scenarios (six a metric, by the offline scenario writer), without its run.
        manage(env, "shell", "-c", "from evaluations.demo import demo_scenarios_seed as s; s()")
        out = manage(
            env, "configure_model", "--name", "SmolLM2", "--base-url", base_url,
            "--model-id", MODEL_ALIAS, "--api-key-env", "",
            "--roles", "user_simulator,target,judge",
            "--default-for", "user_simulator,target,judge",
            "--max-tokens", str(max_tokens), "--max-concurrency", "1",
        )  # fmt: skip
        found = {"SmolLM2": out.strip().splitlines()[-1]}
        started = time.monotonic()
        manage(
            env, "run_evaluation", "--metrics", metric, "--targets", "SmolLM2",
            "--simulator", "SmolLM2", "--judge", "SmolLM2",
            "--turns", "1", "--judgments", "1", "--inline", "--yes", "--name", "real model",
        )  # fmt: skip
        seconds = time.monotonic() - started
        counts = json.loads(
            manage(
                env, "shell", "-c",
                "import json; from evaluations.models import Conversation; "
                "rows = Conversation.objects.filter(run__name='real model'); "
                "print(json.dumps({'completed': rows.filter(status='completed').count(), "
                "'total': rows.count(), "
                "'errors': sorted({r.error[:200] for r in rows if r.error})}))",
            ).strip().splitlines()[-1]
        )  # fmt: skip
        return {**counts, "seconds": seconds, "probes": found}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="A running server; default: start one.")
    parser.add_argument("--python", help="Python of a llama-cpp-python install.")
    parser.add_argument("--gguf", help="The model file.")
    parser.add_argument("--metric", default="IB-M-00001", help="A demo metric key.")
    parser.add_argument("--max-tokens", type=int, default=96)
    args = parser.parse_args()
    process = None
    base_url = args.base_url
    if not base_url:
        process, base_url = server_start(args)
    try:
        result = run(base_url, args.metric, args.max_tokens)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
    for name, probe in result["probes"].items():
        print(f"{name}: {probe}")
    verdict = "PASS" if result["completed"] >= TARGET_COMPLETED else "MISS"
    print(
        f"real model (SmolLM2-135M, default configuration path): {result['completed']} of "
        f"{result['total']} conversations completed in {result['seconds']:.0f} s "
        f"(target ≥ {TARGET_COMPLETED}) {verdict}"
    )
    for error in result["errors"]:
        print(f"  failed: {error}")


if __name__ == "__main__":
    main()
