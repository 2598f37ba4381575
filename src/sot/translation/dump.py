"""`SOT_DUMP=DIR`: write what each translation made, as readable files with stable names.

For the n-th translation (0, 1, ... in this process) of a code object named `f` defined at line
12, `dump_translation` writes

    DIR/f_12/<n>/source.py     the original source (or why it is not available)
    DIR/f_12/<n>/sir.txt       the StatementIR text (with the SIRs it calls)
    DIR/f_12/<n>/program.txt   the Program the compiled SIR runs
    DIR/f_12/<n>/bytecode.txt  a disassembly of the generated code object
    DIR/f_12/<n>/guards.txt    the guards the translation is cached under, one per line
    DIR/f_12/<n>/break.txt     for a frame that breaks: the break's reason code, reason and file:line
                               (then sir.txt and program.txt are the graph before the break, and
                               the frame's rest runs in a resume function dumped under its own name)

Names are deterministic (no timestamps or pids), so a second run overwrites the first's files
and two runs can be diffed; memory addresses are left out of the disassembly for the same
reason. `n` counts per directory, so two functions with the same name and first line (from two
files) never overwrite each other within a run. A dump never makes a translation fail: a
directory that cannot be written is reported with `warnings.warn` and skipped.
"""
from __future__ import annotations

import dis
import inspect
import io
import re
import types
import warnings
from pathlib import Path
from typing import Sequence

from runtime.static import Program

from sot import config
from sot.guards import Guard
from sot.ir import StatementIR
from sot.translation.reasons import Event

__all__ = ["dump_translation", "disassembly"]

_counts: dict[Path, int] = {}
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def dump_translation(code: types.CodeType, sir: StatementIR, program: Program | None,
                     generated: types.CodeType, guards: Sequence[Guard], brk: Event | None = None) -> Path | None:
    """Write one translation's artifacts under `SOT_DUMP` (with `brk`, the graph break it ends in, as
    break.txt); the folder written, None when off or unwritable."""
    root = config.dump_dir()
    if root is None:
        return None
    folder = root / _UNSAFE.sub("_", f"{code.co_name}_{code.co_firstlineno}")
    n = _counts.get(folder, 0)
    _counts[folder] = n + 1
    target = folder / str(n)
    files = {
        "source.py": _source(code),
        "sir.txt": str(sir),
        "program.txt": program.to_string() if program is not None else
        "# no Program: the frame computes no tensor it returns\n",
        "bytecode.txt": _disassembly(generated),
        "guards.txt": "".join(f"{g}\n" for g in guards),
    }
    if brk is not None:
        files["break.txt"] = f"{brk}\n"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (target / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as e:
        warnings.warn(f"SOT_DUMP: cannot write the dump of {code.co_name} ({_where(code)}) to {target}: {e}",
                      RuntimeWarning, stacklevel=2)
        return None
    return target


def _where(code: types.CodeType) -> str:
    return f"{code.co_filename}:{code.co_firstlineno}"


def _source(code: types.CodeType) -> str:
    """The function's source as `inspect` finds it, or a comment saying why there is none."""
    header = f"# {code.co_name} from {_where(code)}\n"
    try:
        return header + inspect.getsource(code)
    except (OSError, TypeError) as e:
        return header + f"# source not available: {e}\n"


def disassembly(code: types.CodeType) -> str:
    """`dis` of generated code, without memory addresses (so two runs' outputs diff cleanly)."""
    out = io.StringIO()
    dis.dis(code, file=out)
    return _ADDRESS.sub("", out.getvalue())


def _disassembly(generated: types.CodeType) -> str:
    """The dump's bytecode.txt: a header naming the generated code, then its `disassembly`."""
    return (f"# generated code {generated.co_name} ({_where(generated)}), "
            f"{generated.co_argcount} positional argument(s)\n" + disassembly(generated))
