"""The `sot` command: run a script under the JIT and report, gate CI, inspect caches, explain.

    sot run [--report OUT.json] SCRIPT [ARGS...]      (or: sot run [--report OUT.json] -m|--module MODULE [ARGS...])
    sot report OUT.json [--format text|json|junit|markdown|html] [-o PATH]
               [--max-breaks N] [--max-fallbacks N] [--min-captured-ratio R] [--max-recompiles N]
               [--baseline OLD.json]
    sot cache OUT.json [FUNCTION]          sot cache why FUNCTION [OUT.json]
    sot explain SCRIPT:FUNCTION [ARGS...]
    sot bisect SCRIPT:FUNCTION [--rtol R] [--atol A]

`sot run`'s own options come before SCRIPT; everything after it is the script's `sys.argv[1:]`.
The report is written at exit, also when the script raises (exit status 1) or calls sys.exit
(its status); without `--report` a text summary goes to stderr. `sot report` exits 1 when a
threshold is exceeded or a function got worse than `--baseline` (each violation on stderr),
2 on bad input (an unreadable report, an unknown function). `sot bisect` loads SCRIPT as a module
(its `__main__` block does not run), calls FUNCTION with no arguments eagerly and compiled, and
names the smallest compiled subgraph whose result differs (exit 1), or says none does (exit 0).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from pathlib import Path

from sot.translation.reasons import REASONS

from . import formats, gate, record
from .bisect import bisect
from .htmlreport import write_html
from .report import FunctionReport, Report, load, report

__all__ = ["main"]

_DEFAULT_REPORT = "sot-report.json"
_ALIASES = {"--module": "-m"}  # long spellings of sot run's options


class UsageError(Exception):
    """Bad input to the command: shown as `sot: message`, exit status 2."""


def main(argv: list[str] | None = None) -> int:
    """Run the `sot` command with `argv` (default: sys.argv[1:]); the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"run": _cmd_run, "report": _cmd_report, "cache": _cmd_cache, "explain": _cmd_explain,
                "bisect": _cmd_bisect}
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands:
        print(__doc__.split("\n\n")[1], file=sys.stderr if argv[:1] not in (["-h"], ["--help"]) else sys.stdout)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        return commands[argv[0]](argv[1:])
    except UsageError as e:
        print(f"sot {argv[0]}: {e}", file=sys.stderr)
        return 2


# ----- sot run / sot explain: a script under the JIT -----

def _split_run_args(argv: list[str], options: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """sot's options (before the target) and the rest: the target and its arguments."""
    found: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        name, eq, value = argv[i].partition("=")
        name = _ALIASES.get(name, name)
        if name not in options:
            raise UsageError(f"unknown option {argv[i]!r} (options go before the script; known: {', '.join(options)})")
        if not eq:
            if i + 1 >= len(argv):
                raise UsageError(f"{name} needs a value")
            i, value = i + 1, argv[i + 1]
        found[name] = value
        i += 1
        if name == "-m":
            break
    return found, argv[i:]


def _run_target(script: str | None, module: str | None, args: list[str]) -> int:
    """Run a script or module as __main__ with `args`; its exit status (1 when it raised)."""
    if module is None and not os.path.exists(script):
        raise UsageError(f"no such script: {script}")
    record.retain()
    old_argv, old_path = sys.argv[:], sys.path[:]
    try:
        if module is not None:
            sys.argv = [module, *args]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [script, *args]
            path = os.path.abspath(script)  # code objects name it absolutely: reports find the source anywhere
            sys.path.insert(0, os.path.dirname(path))
            runpy.run_path(path, run_name="__main__")
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException:  # noqa: BLE001 - the script's own failure: shown, and the report still written
        traceback.print_exc()
        return 1
    finally:
        sys.argv, sys.path[:] = old_argv, old_path


def _cmd_run(argv: list[str]) -> int:
    options, rest = _split_run_args(argv, ("--report", "-m"))
    module = options.get("-m")
    if module is None and not rest:
        raise UsageError("usage: sot run [--report OUT.json] SCRIPT [ARGS...] | sot run [--report OUT.json] -m MODULE")
    status = _run_target(None if module else rest[0], module, rest if module else rest[1:])
    result = report()
    if "--report" in options:
        result.save(options["--report"])
        print(f"sot run: report written to {options['--report']}", file=sys.stderr)
    else:
        sys.stderr.write(formats.render(result, "text"))
    return status


def _cmd_explain(argv: list[str]) -> int:
    if not argv or ":" not in argv[0]:
        raise UsageError("usage: sot explain SCRIPT:FUNCTION [ARGS...]")
    script, _, name = argv[0].rpartition(":")
    status = _run_target(script, None, argv[1:])
    functions = report(details=True).function(name)
    if not functions:
        raise UsageError(f"{name!r} was not translated while {script} ran (is it wrapped with sot.to_static?)")
    sys.stdout.write(_explain_text(name, functions))
    return status


def _cmd_bisect(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="sot bisect", description="the smallest subgraph whose result differs")
    parser.add_argument("target", metavar="SCRIPT:FUNCTION", help="a function of the script taking no arguments")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (default 0: exact)")
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance (default 0: exact)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    script, _, name = args.target.rpartition(":")
    if not script or not os.path.exists(script):
        raise UsageError(f"usage: sot bisect SCRIPT:FUNCTION; no such script: {script or args.target!r}")
    path = os.path.abspath(script)
    sys.path.insert(0, os.path.dirname(path))
    namespace = runpy.run_path(path, run_name="__sot_bisect__")
    fn = namespace.get(name)
    if not callable(fn):
        raise UsageError(f"{script} defines no function {name!r}")
    culprit = bisect(getattr(fn, "__wrapped__", fn), rtol=args.rtol, atol=args.atol)
    print(culprit if culprit is not None else f"sot bisect: every compiled subgraph of {name} matches eager")
    return 1 if culprit is not None else 0


def _explain_text(name: str, functions: list[FunctionReport]) -> str:
    """Graph and break counts, each reason with its hint, and per graph its SIR, bytecode and Program."""
    graphs = sum(len(f.graphs) for f in functions)
    breaks = sum(len(f.breaks) for f in functions)
    fallbacks = sum(len(f.fallbacks) for f in functions)
    lines = [f"explain {name}: {graphs} graph(s), {breaks} break(s), {fallbacks} fallback(s)"]
    for f in functions:
        lines += ["", f"== {f.qualname}  {f.where}" + (f"  (from a break in {f.resume_of})" if f.resume_of else "")]
        for kind, events in (("break", f.breaks), ("eager", f.fallbacks)):
            for e in events:
                lines += [f"  {kind} [{e.code}] {e.reason} ({e.where})" + (f"  | {e.source}" if e.source else ""),
                          f"    hint: {REASONS[e.code].hint}"]
        for g in f.graphs:
            lines += [f"  -- graph of entry {g.entry}: {g.ops} op(s), ran {g.runs}x", _indent(g.sir),
                      "  -- generated bytecode", _indent(g.bytecode or ""), "  -- Program", _indent(g.program or "")]
    return "\n".join(lines) + "\n"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines())


# ----- sot report / sot cache: a saved report -----

def _load(path: str) -> Report:
    try:
        return load(path)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _cmd_report(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="sot report", description="Summarise a sot report; fail on thresholds.")
    p.add_argument("file")
    p.add_argument("--format", choices=[*formats.FORMATS, "html"], default="text")
    p.add_argument("-o", "--output", help="file to write (a folder for html); default stdout (html: sot-html)")
    p.add_argument("--max-breaks", type=int)
    p.add_argument("--max-fallbacks", type=int)
    p.add_argument("--min-captured-ratio", type=float)
    p.add_argument("--max-recompiles", type=int)
    p.add_argument("--baseline", help="an older report: fail on any function that got worse")
    args = p.parse_args(argv)
    current = _load(args.file)
    baseline = _load(args.baseline) if args.baseline else None
    if args.format == "html":
        index = write_html(current, args.output or "sot-html")
        print(f"sot report: {index}", file=sys.stderr)
    elif args.output:
        Path(args.output).write_text(formats.render(current, args.format), encoding="utf-8")
    else:
        sys.stdout.write(formats.render(current, args.format))
    limits = gate.Limits(args.max_breaks, args.max_fallbacks, args.min_captured_ratio, args.max_recompiles)
    violations = gate.check(current, limits, baseline)
    for v in violations:
        print(f"sot report: FAIL: {v}", file=sys.stderr)
    return 1 if violations else 0


def _cmd_cache(argv: list[str]) -> int:
    if argv[:1] == ["why"]:
        if len(argv) not in (2, 3):
            raise UsageError("usage: sot cache why FUNCTION [OUT.json]")
        functions = _functions(_load(argv[2] if len(argv) == 3 else _DEFAULT_REPORT), argv[1])
        sys.stdout.write(formats.why_text(functions))
        return 0
    if len(argv) not in (1, 2):
        raise UsageError("usage: sot cache OUT.json [FUNCTION]")
    loaded = _load(argv[0])
    sys.stdout.write(formats.cache_text(_functions(loaded, argv[1]) if len(argv) == 2 else loaded.functions))
    return 0


def _functions(loaded: Report, name: str) -> list[FunctionReport]:
    found = loaded.function(name)
    if not found:
        raise UsageError(f"no function {name!r} in the report; known: {', '.join(f.qualname for f in loaded.functions)}")
    return found


if __name__ == "__main__":
    sys.exit(main())
