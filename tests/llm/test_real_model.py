"""Opt-in: the real small model (SmolLM2-135M through llama-cpp-python's server) completes at
least five of one metric's six conversations at one turn through the default configuration
path (`configure_model` without a structured-output option). Several minutes on 2 cores.

    REAL_MODEL=1 .venv/bin/python -m pytest -m realmodel tests/llm/test_real_model.py
    REAL_MODEL=http://127.0.0.1:18630/v1 ...   # a server already running

REAL_MODEL_PYTHON / REAL_MODEL_GGUF name a llama-cpp-python install and model file to serve
instead of ../shared/realmodel's.
"""

import argparse
import os

import pytest

from benchmarks.real_model import TARGET_COMPLETED, run, server_start

REAL_MODEL = os.environ.get("REAL_MODEL", "")

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not REAL_MODEL, reason="set REAL_MODEL=1 (or a server URL) to run"),
    pytest.mark.timeout(1800),
]


def test_the_small_real_model_completes_five_of_six_conversations():
    process, base_url = None, REAL_MODEL if REAL_MODEL.startswith("http") else ""
    if not base_url:
        args = argparse.Namespace(
            python=os.environ.get("REAL_MODEL_PYTHON"), gguf=os.environ.get("REAL_MODEL_GGUF")
        )
        process, base_url = server_start(args)
    try:
        result = run(base_url, "IB-M-00001", 96)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
    assert result["total"] == 6
    assert result["completed"] >= TARGET_COMPLETED, result
