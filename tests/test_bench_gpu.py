"""The GPU benchmark script (benchmarks/gpu.py) runs every section end to end, here on the CuPy stand-in
(tests/fake_cupy.py) with small shapes: each variant's first result is checked against the reference's by
the script itself before it is timed. The figures mean nothing on the stand-in; nothing here times anything."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import runtime as paddle
import sot

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(sot.__file__).parents[1]),
                                                                      os.environ.get("PYTHONPATH")])))


def test_the_gpu_benchmark_runs_every_section_and_every_variant_agrees():
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "fake_cupy.py"), str(ROOT / "benchmarks" / "gpu.py"),
                           "--quick"], capture_output=True, text=True, timeout=600, env=_env())
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert not re.search(r"^  .+ failed: ", out, re.MULTILINE), out   # every variant agreed with the reference
    for section in ("elementwise chain", "two independent branches", "W5: CNN inference", "W3: MLP training step"):
        assert section in out, out
    rows = re.findall(r"^  (.+?)\s{2,}[\d.]+ (?:us|ms)\s+[\d.]+x of (.+)$", out, re.MULTILINE)
    names = {name.strip() for name, _ in rows}
    assert {"runtime eager", "sot compiled", "sot compiled, unfused", "one stream", "a stream per branch"} <= names, out


@pytest.mark.skipif(paddle.is_compiled_with_cuda(), reason="checks a machine without a GPU")
def test_without_a_gpu_the_gpu_benchmark_says_so_and_exits_2():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu.py"), "--quick"], capture_output=True,
                          text=True, timeout=120, env=_env())
    assert done.returncode == 2 and "CuPy with a usable GPU is not available" in done.stdout
