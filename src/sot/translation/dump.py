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
    DIR/f_12/<n>/transformed.py  the generated code as Python source (sot.codegen.pysource), its
                               guards and break as comments; bytecode.txt stays what runs
    DIR/f_12/<n>/resume_<i>.py   each resume function it calls (loop_body.py: the body function of
                               the loop it runs for real): its entry and the user's lines from there

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
import linecache
import re
import types
import warnings
from pathlib import Path
from typing import Sequence

from runtime.static import Program

from sot import config
from sot.codegen.pysource import Rendered, Unrenderable, render, resume_source
from sot.guards import Guard
from sot.ir import StatementIR
from sot.translation.reasons import Event

__all__ = ["dump_translation", "disassembly", "readable_source", "transformed_source"]

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
    files.update(_python_source(code, sir, generated, guards, brk, n))
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (target / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as e:
        warnings.warn(f"SOT_DUMP: cannot write the dump of {code.co_name} ({_where(code)}) to {target}: {e}",
                      RuntimeWarning, stacklevel=2)
        return None
    return target


def _python_source(code: types.CodeType, sir: StatementIR | None, generated: types.CodeType, guards: Sequence[Guard],
                   brk: Event | None, n: int) -> dict[str, str]:
    """transformed.py and the files of the resume functions it calls; a comment saying why where the
    generated code cannot be rendered (a dump never makes a translation fail)."""
    try:
        rendered = transformed_source(code, sir, generated, guards, brk, n)
        files = {"transformed.py": rendered.text}
        for name, (kind, child) in rendered.children.items():
            files[f"{name.lstrip('_')}.py"] = resume_source(child, name, kind)
    except Exception as e:  # noqa: BLE001 - a gap of the renderer; bytecode.txt still says what runs
        reason = str(e) if isinstance(e, Unrenderable) else f"{type(e).__name__}: {e}"
        return {"transformed.py": f"# {code.co_name} ({_where(code)}), translation {n}: the generated code "
                                  f"could not be rendered as Python ({reason}); see bytecode.txt\n"}
    return files


def readable_source(code: types.CodeType, sir: StatementIR | None, generated: types.CodeType,
                    guards: Sequence[Guard], brk: Event | None = None, n: int = 0) -> str:
    """What transformed.py holds for this translation (`sot.explain` shows it too): the generated code
    as Python, or a comment saying why it could not be rendered."""
    return _python_source(code, sir, generated, guards, brk, n)["transformed.py"]


def transformed_source(code: types.CodeType, sir: StatementIR | None, generated: types.CodeType,
                       guards: Sequence[Guard], brk: Event | None = None, n: int = 0) -> Rendered:
    """The generated code of translation `n` of `code` as Python source, headed by what it runs
    (`sir`), its guards and its break (see sot.codegen.pysource). Raises Unrenderable."""
    graph = sir.name if sir is not None and sir.statements else None  # (the n-th translation's graph: number n)
    header = [f"{code.co_name} ({_where(code)}), translation {n}: the code SOT runs instead, as Python.",
              "Rendered from the generated bytecode (bytecode.txt), which is what runs: its frames keep the",
              "user's file and lines, so a debugger shows the user's source, not this file.",
              "__sot_* names are its temporaries."]
    if graph is not None:
        header.append(f"__compiled_graph_{n}(...) runs {graph} (sir.txt; program.txt: its Program, when "
                      "compiled) and makes the side effects it recorded.")
    header += ["", "Guards (this code runs while all of them hold):", *(f"  {g}" for g in guards)]
    note = []
    if brk is not None:
        file, _, line = brk.where.rpartition(":")
        text = linecache.getline(file, int(line)).strip() if line.isdigit() else ""
        note = [f"graph break: {brk}", *([f"  {line} | {text}"] if text else [])]
        header += ["", *note]
    return render(generated, n, header, note)


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
