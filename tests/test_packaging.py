"""The two packages import, agree on their version with pyproject.toml, and keep their layering."""
import pathlib
import re
import subprocess
import sys

import runtime
import sot

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_versions_match_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    assert runtime.__version__ == version
    assert sot.__version__ == version


def test_runtime_never_imports_sot():
    code = "import sys, runtime, runtime.nn, runtime.optimizer, runtime.io; print('sot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    offenders = [p for p in (ROOT / "src" / "runtime").rglob("*.py")
                 if re.search(r"^\s*(from|import)\s+sot\b", p.read_text(), re.M)]
    assert not offenders
