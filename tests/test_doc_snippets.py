"""Every ```python block of README.md and docs/*.md runs; the op count, links and reason codes the docs state hold.

Convention (also in docs/design.md, "Documentation"): a ```python block is code a reader can paste
and run; the blocks of one page run in order in ONE namespace, so a later block may use what an
earlier one defined, as the page reads. A block whose first line is `# not run: <why>` is shown,
not run (use it sparingly: for code that needs something a test cannot have). Shell commands,
program output and other text go in ```text or ```sh fences, which are never run.

Each page runs in a fresh interpreter, in a temporary working directory, with the sources this
test imports first on the path and `SOT_STRICT=1` (no other `SOT_*` knob); a failing block is
reported as `page:line` of its fence, and its traceback names the page's own lines (each block is
compiled with the page as its file name and its real line numbers).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import runtime

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(runtime.__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = "# not run:"
FENCE = re.compile(r"^```(\S*)\s*$")


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """(line of the first code line, code) of each ```python block of `page`, in page order."""
    blocks, lines = [], page.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"{page.name}:{i + 1}: a ``` fence is never closed"
        if m.group(1) == "python":
            blocks.append((i + 2, "\n".join(lines[i + 1:end])))
        i = end + 1
    return blocks


# Runs in the child: each block compiled under the page's name at its real lines, in one namespace.
RUNNER = """
import json, sys, traceback
page, blocks = sys.argv[1], json.loads(sys.stdin.read())
namespace = {"__name__": "__main__"}
for line, code in blocks:
    try:
        exec(compile("\\n" * (line - 1) + code, page, "exec"), namespace)
    except BaseException:
        sys.stderr.write(f"BLOCK FAILED at {page}:{line - 1}\\n" + traceback.format_exc())
        sys.exit(1)
"""


def runnable_blocks(page: Path) -> list[tuple[int, str]]:
    """The ```python blocks of `page` that run: all but those whose first line is `# not run: <why>`."""
    return [(line, code) for line, code in python_blocks(page) if not code.lstrip().startswith(NOT_RUN)]


def run_blocks(blocks: list[tuple[int, str]], page_name: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run `blocks` in order in one namespace of a fresh interpreter whose working directory is `cwd`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOT_")}
    env.update(PYTHONPATH=str(SRC), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", SOT_STRICT="1")   # a JIT bug the docs meet fails, as in `make test`
    return subprocess.run([sys.executable, "-c", RUNNER, page_name], input=json.dumps(blocks),
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=lambda p: p.name)
def test_every_python_block_of_the_page_runs(page, tmp_path):
    done = run_blocks(runnable_blocks(page), str(page.relative_to(ROOT)), tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]


def test_a_failing_block_is_reported_at_its_page_and_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# t\n\n```python\nx = 1\n```\n\ntext\n\n```python\nassert x == 2, 'x is 1'\n```\n")
    blocks = python_blocks(page)
    assert blocks == [(4, "x = 1"), (10, "assert x == 2, 'x is 1'")]
    done = run_blocks(blocks, "page.md", tmp_path)
    assert done.returncode == 1
    assert "BLOCK FAILED at page.md:9" in done.stderr          # the fence of the second block
    assert 'File "page.md", line 10' in done.stderr and "x is 1" in done.stderr


def test_blocks_marked_not_run_and_other_fences_are_not_run(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\n# not run: needs a GPU\nraise SystemExit(3)\n```\n"
                    "```text\nnot python at all\n```\n```sh\nmake test\n```\n")
    assert [code.splitlines()[0] for _, code in python_blocks(page)] == ["# not run: needs a GPU"]
    assert runnable_blocks(page) == []


OP_COUNT = re.compile(r"over ([\d,]+) ops\b")


def test_the_op_counts_the_docs_state_are_lower_bounds_of_the_registry():
    stated = [(page.name, int(m.group(1).replace(",", "")))
              for page in PAGES for m in OP_COUNT.finditer(page.read_text())]
    assert stated, "the docs no longer state an op count: drop this test"
    registered = len(runtime.ops.all_ops())
    assert all(n <= registered for _, n in stated), (stated, registered)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of `page`'s headings: lower case, punctuation dropped, spaces as dashes."""
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in page.read_text().splitlines() if line.startswith("#")}


def test_every_relative_link_of_the_docs_names_a_file_and_heading_that_exist():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in anchors(dest)):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_every_reason_code_the_docs_name_is_registered():
    from sot.translation.reasons import REASONS

    named = {(page.name, code) for page in PAGES for code in re.findall(r"SOT-[A-Z]\d{3}", page.read_text())}
    assert named, "the docs name no reason code"
    assert {(page, code) for page, code in named if code not in REASONS} == set()


SOURCE_PATH = re.compile(r"`((?:src|sot|runtime|tests|benchmarks|docs|examples)/[\w./-]*|[\w.-]+/[\w./-]+\.(?:py|c|pyi|md))`")


def _git_ignored(paths: list[Path]) -> set[Path]:
    """The paths among `paths` that git ignores (build outputs), or none where git is not at hand."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "--stdin"], input="\n".join(map(str, paths)),
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {Path(line) for line in done.stdout.splitlines()} if done.returncode in (0, 1) else set()


def test_every_source_path_the_docs_name_exists():
    """A module or folder named in the docs (`sot/codegen/`, `executor/gc.py`, ...) exists in the
    repository, from its root, src/, src/sot/ or src/runtime/: a move that forgets the docs fails here.
    A build output (a path git ignores) does not count: a fresh clone lacks it until built."""
    bases = [ROOT, ROOT / "src", ROOT / "src" / "sot", ROOT / "src" / "runtime"]
    named = {(page.relative_to(ROOT).as_posix(), m) for page in PAGES for m in SOURCE_PATH.findall(page.read_text())}
    assert named, "the docs name no source path"
    found = {(page, m): [base / m for base in bases if (base / m).exists()] for page, m in named}
    ignored = _git_ignored([path for paths in found.values() for path in paths])
    assert {key for key, paths in found.items() if not set(paths) - ignored} == set()
