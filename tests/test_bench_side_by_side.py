"""`make bench`'s side-by-side table (benchmarks/side_by_side.py) runs: our system only, one
workload, tiny repetition counts. Nothing here times anything: the script itself checks that
`sot.to_static`'s result equals `runtime` eager's before it times a variant."""
import os
import re
import subprocess
import sys
from pathlib import Path

import sot

ROOT = Path(__file__).resolve().parents[1]


def test_the_side_by_side_script_prints_a_ratio_row_for_our_eager_and_jit():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(sot.__file__).parents[1]),
                                                                     os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "side_by_side.py"), "--only", "W1",
                           "--rounds", "1", "--block-s", "0.001", "--no-peers"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| workload |"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "workload", "runtime eager (time)", "numpy", "sot"]
    rows = [line for line in lines if line.startswith("| W")]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[0] == "W1" and re.fullmatch(r"[\d.]+ (us|ms)", cells[1])
    assert all(re.fullmatch(r"\d+\.\d\d", c) for c in cells[2:]), cells
    assert "W1: cache hit" in done.stdout
