"""The `sot` command: run a script under the JIT and report, gate CI, inspect caches, explain.

    sot run [--report OUT.json] SCRIPT [ARGS...]      (or: sot run [--report OUT.json] -m|--module MODULE [ARGS...])
    sot report [OUT.json] [--format text|json|junit|markdown|html] [-o PATH]
               [--max-breaks N] [--max-fallbacks N] [--min-captured-ratio R] [--max-recompiles N]
               [--baseline OLD.json]
    sot cache [OUT.json] [FUNCTION]        sot cache why [OUT.json] [FUNCTION]
    sot explain SCRIPT:FUNCTION [ARGS...]  (FUNCTION: name, Class.method, obj.method, or a Layer object)
    sot bisect SCRIPT:FUNCTION [--rtol R] [--atol A]

OUT.json defaults to sot-report.json in the working directory, which `sot run` writes unless told
another path (as `coverage run` writes .coverage). `sot <command> --help` describes each command's options. Bad input (an unknown option, an unreadable
or malformed report, an unwritable output, a missing script or module) exits 2 with one line on stderr.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import runpy
import sys
import traceback
import types
from pathlib import Path
from typing import Callable, NoReturn

import sot
from runtime.nn import Layer
from sot.opcode_executor.markers import is_to_static_wrapper
from sot.translation.reasons import REASONS

from . import formats, gate, record
from .bisect import bisect
from .htmlreport import write_html
from .report import FunctionReport, Report, load, report

__all__ = ["main"]

_DEFAULT_REPORT = "sot-report.json"
_CACHE_USAGE = "sot cache [OUT.json] [FUNCTION]"
_WHY_USAGE = "sot cache why [OUT.json] [FUNCTION]"


class UsageError(Exception):
    """Bad input to the command: shown as `sot COMMAND: message`, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one-line UsageErrors instead of usage text and SystemExit(2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def main(argv: list[str] | None = None) -> int:
    """Run the `sot` command with `argv` (default: sys.argv[1:]); the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    command = argv[0] if argv else None
    try:
        if command is not None and not command.startswith("-") and command not in parser.commands:
            raise UsageError(f"unknown command {command!r}; commands: {', '.join('sot ' + c for c in parser.commands)}"
                             " (see sot --help)")
        if command == "run":  # its script's arguments are split off first: argparse would read them as options
            return _cmd_run(parser.commands["run"], argv[1:])
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # named here: the top-level parser would point at `sot --help`
            helped = f"sot {command}" if command in parser.commands else "sot"
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)} (see {helped} --help)")
        if args.command is None:
            raise UsageError("missing command (see sot --help)")
        return args.handler(args)
    except UsageError as e:
        print(f"sot {command}: {e}" if command in parser.commands else f"sot: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0


class _Commands(_Parser):
    """The top-level parser, holding each command's subparser by name (`sot run` parses with its own)."""

    commands: dict[str, argparse.ArgumentParser]


def _parser() -> _Commands:
    """`sot` and its subcommands, each with --help text describing every option."""
    top = _Commands(prog="sot", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                    epilog=__doc__.split("\n\n")[1])
    top.add_argument("--version", action="version", version=f"sot {sot.__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    top.commands = {}

    def command(name: str, handler: Callable[[argparse.Namespace], int] | None, **kwargs: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=kwargs["description"], prog=f"sot {name}", allow_abbrev=False,
                           formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)
        p.set_defaults(handler=handler)
        top.commands[name] = p
        return p

    run = command("run", None, description="Run a Python script or module under the JIT and write what it did.",
                  usage="sot run [--report OUT.json] [--details] SCRIPT [ARGS...]\n"
                        "       sot run [--report OUT.json] [--details] -m MODULE [ARGS...]",
                  epilog="ARGS become the script's sys.argv[1:]. --report may also follow SCRIPT (it is then taken as\n"
                         "sot's, not the script's); --module may not. Everything after `--` goes to the script as is:\n"
                         "  sot run train.py --report r.json --epochs 3    (the script gets --epochs 3)\n"
                         "  sot run train.py -- --report x                 (the script gets --report x)\n"
                         "The report is written at exit, also when the script raises (exit status 1) or calls\n"
                         "sys.exit (its status).")
    run.add_argument("--report", metavar="OUT.json",
                     help=f"write the report as JSON (schema sot-report/1) here (default: {_DEFAULT_REPORT}, which "
                          "`sot report`, `sot cache` and `sot cache why` read when given no report)")
    run.add_argument("--details", action="store_true",
                     help="also store each graph's generated bytecode and Program text (larger report; the HTML "
                          "timeline of `sot report --format html` shows them)")
    run.add_argument("-m", "--module", metavar="MODULE", help="run a module (like python -m) instead of SCRIPT")
    run.add_argument("script", metavar="SCRIPT", nargs="?", help="the Python file to run as __main__")
    run.add_argument("args", metavar="ARGS", nargs=argparse.REMAINDER, help="the script's arguments")

    rep = command("report", _cmd_report, description="Summarise a saved report; fail (exit 1) on thresholds.",
                  epilog="Exit status: 0 ok, 1 a threshold exceeded or a function worse than --baseline (each\n"
                         "violation on stderr), 2 bad input.")
    rep.add_argument("file", metavar="OUT.json", nargs="?", default=_DEFAULT_REPORT,
                     help=f"a report written by `sot run` (default: {_DEFAULT_REPORT})")
    rep.add_argument("--format", choices=[*formats.FORMATS, "html"], default="text", help="output format (default: text)")
    rep.add_argument("-o", "--output", metavar="PATH",
                     help="file to write (a folder for html); default stdout (html: sot-html)")
    rep.add_argument("--max-breaks", type=_count, metavar="N", help="fail when the total breaks over all functions exceed N")
    rep.add_argument("--max-fallbacks", type=_count, metavar="N",
                     help="fail when the total eager fallbacks over all functions exceed N")
    rep.add_argument("--min-captured-ratio", type=_ratio, metavar="R",
                     help="fail when the overall ratio of ops captured in graphs (all functions together) is below R, "
                          "a ratio from 0 to 1 (0.9 = 90%%)")
    rep.add_argument("--max-recompiles", type=_count, metavar="N", help="fail when any one function recompiled more than N times")
    rep.add_argument("--baseline", metavar="OLD.json",
                     help="an older report: fail on any function with a break or fallback it did not have, or more recompiles")

    cache = command("cache", _cmd_cache, description="Show the guard cache of each function in a report.",
                    usage=f"{_CACHE_USAGE}\n       {_WHY_USAGE}",
                    epilog="`sot cache [OUT.json] [FUNCTION]`: entries in lookup order, hits, misses.\n"
                           "`sot cache why [OUT.json] [FUNCTION]`: per recent miss, each entry's first failing guard.\n"
                           "Both take the same arguments, each optional: FUNCTION limits the output to that function\n"
                           "(and the resume functions its breaks made); OUT.json is the report, by default\n"
                           f"{_DEFAULT_REPORT}, which `sot run SCRIPT` writes. The report is the\n"
                           "argument naming an existing file, else the one ending in .json, so either order works:\n"
                           "  sot cache why r.json step    sot cache why step r.json    sot cache why step")
    cache.add_argument("words", nargs="*", metavar="[why] [OUT.json] [FUNCTION]",
                       help="`why` to show why lookups missed; the report; the function")

    explain = command("explain", _cmd_explain,
                      description="Run SCRIPT, then explain FUNCTION: graphs, breaks and fallbacks with hints, SIRs, "
                                  "generated bytecode, Programs.",
                      epilog="FUNCTION gets its arguments from SCRIPT itself: SCRIPT runs as __main__ (ARGS become its\n"
                             "sys.argv[1:]) and every call it makes to FUNCTION is explained, counts summed over the calls.\n"
                             "FUNCTION need not be decorated: what SCRIPT binds at its top level is translated for this\n"
                             "run (the functions themselves are not changed), as sot.explain(fn, *args) does in Python:\n"
                             "  step          a function: bound in SCRIPT's namespace to a to_static wrapper of it\n"
                             "  Model.step    a method of a class SCRIPT defines: the class's method is wrapped\n"
                             "  model.step    a method of an object SCRIPT makes: the object gets a wrapper of it\n"
                             "  net           a Layer object: its forward, as sot.to_static(net)\n"
                             "  sot explain train.py:step --epochs 1     (train.py gets --epochs 1; step is explained)")
    explain.add_argument("target", metavar="SCRIPT:FUNCTION", help="the script to run and a function it calls")
    explain.add_argument("args", metavar="ARGS", nargs=argparse.REMAINDER, help="the script's arguments")

    bis = command("bisect", _cmd_bisect,
                  description="Call FUNCTION eagerly and compiled; name the smallest compiled subgraph whose result "
                              "differs (exit 1), or say none does (exit 0).",
                  epilog="SCRIPT is loaded as a module: its __main__ block does not run.")
    bis.add_argument("target", metavar="SCRIPT:FUNCTION", help="a function of the script taking no arguments")
    bis.add_argument("--rtol", type=float, default=0.0, metavar="R", help="relative tolerance (default 0: exact)")
    bis.add_argument("--atol", type=float, default=0.0, metavar="A", help="absolute tolerance (default 0: exact)")
    return top


def _count(text: str) -> int:
    """A threshold count: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def _ratio(text: str) -> float:
    """A ratio from 0 to 1 (not a percentage: 90 is refused, not read as 90%)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a ratio from 0 to 1 (0.9 = 90%), got {text!r}")
    return value


# ----- sot run / sot explain: a script under the JIT -----

def _split_run(argv: list[str]) -> tuple[list[str], list[str]]:
    """sot run's arguments up to and including the target (SCRIPT, or -m MODULE), and the rest.

    Unknown options before the target are refused here: argparse would otherwise take a typo
    for the script's option or the script for the option's value.
    """
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = arg.partition("=")[0]
        if arg == "--":
            return argv[:i + 2], argv[i + 2:]
        if not arg.startswith("-") or arg == "-":
            return argv[:i + 1], argv[i + 1:]
        if name in ("-m", "--module") or (arg.startswith("-m") and not arg.startswith("--")):
            stop = i + 1 if "=" in arg or len(name) == 2 and len(arg) > 2 else i + 2
            return argv[:stop], argv[stop:]
        if name not in ("--report", "--details", "-h", "--help"):
            raise UsageError(f"unknown option {arg!r} (sot run's options: --report, --details, -m/--module; "
                             "see sot run --help)")
        i += 2 if name == "--report" and "=" not in arg else 1
    return argv, []


def _script_args(rest: list[str]) -> tuple[str | None, list[str]]:
    """--report given after the target (sot's), and the script's arguments (`--` ends sot's options)."""
    report_path, args = None, []
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            return report_path, args + rest[i + 1:]
        if name == "--module":
            raise UsageError(f"{arg!r} after the script: -m/--module replaces SCRIPT; put `--` before it to pass it to the script")
        if name == "--report":
            if not eq:
                if i + 1 >= len(rest):
                    raise UsageError("argument --report: expected one argument")
                value, i = rest[i + 1], i + 1
            if report_path is not None:
                raise UsageError("--report given twice")
            report_path = value
        else:
            args.append(arg)
        i += 1
    return report_path, args


def _run_target(script: str | None, module: str | None, args: list[str], namespace: dict | None = None) -> int:
    """Run a script or module as __main__ with `args`; its exit status (1 when it raised).
    A script runs in `namespace` when given (its top-level names land there), else in runpy's own."""
    if module is None and not os.path.exists(script):
        raise UsageError(f"no such script: {script}")
    if module is not None:
        _find_module(module)
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
            if namespace is None:
                runpy.run_path(path, run_name="__main__")
            else:
                namespace.update(__name__="__main__", __file__=path, __builtins__=__builtins__)
                exec(compile(Path(path).read_bytes(), path, "exec"), namespace)  # noqa: S102 - the user's script
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


def _find_module(module: str) -> None:
    """Refuse a module that cannot be found (searching where run_module will): a usage error, not the script's failure."""
    old_path = sys.path[:]
    sys.path.insert(0, os.getcwd())
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError) as e:
        raise UsageError(f"cannot find module {module!r}: {e}") from None
    finally:
        sys.path[:] = old_path
    if found is None:
        raise UsageError(f"no module named {module!r}")


def _cmd_run(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    head, rest = _split_run(argv)
    args = parser.parse_args(head)
    late_report, script_args = _script_args(rest)
    if late_report is not None and args.report is not None:
        raise UsageError("--report given twice")
    report_path = args.report if late_report is None else late_report
    if args.module is None and args.script is None:
        raise UsageError("missing SCRIPT or -m MODULE (see sot run --help)")
    if args.module is not None and args.script is not None:
        script_args.insert(0, args.script)
    status = _run_target(args.script if args.module is None else None, args.module, script_args)
    result = report(details=args.details)
    path = _DEFAULT_REPORT if report_path is None else report_path
    _write(path, result.save)
    print(f"sot run: {formats.headline(result)}; report written to {path} (details: sot report {path})",
          file=sys.stderr)
    return status


class _TranslatingNamespace(dict):
    """A script's globals where binding the first name of TARGET translates what TARGET names, for the run:
    `name` bound to a plain function binds a to_static wrapper of it instead, and to a Layer translates
    the Layer's forward; `Class.method` replaces the class's method with a wrapper of it; `obj.method`
    gives the instance a wrapper of its class's method, bound to it. The script's own calls are then
    translated, the function objects left untouched. A to_static wrapper is bound as it is."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.head, _, self.attr = target.partition(".")
        self.qualname = target  # the functions the report is searched for
        self.found = False  # the script bound something TARGET names that can be translated

    def __setitem__(self, key: str, value: object) -> None:
        if key == self.head:
            value = self._translated(value)
        super().__setitem__(key, value)

    def _translated(self, value: object) -> object:
        """`value` (bound to the first name of TARGET) with what TARGET names translated."""
        if not self.attr:
            self.found = True
            if isinstance(value, Layer):
                self.qualname = type(value).forward.__qualname__
                return sot.to_static(value)
            return sot.to_static(value) if isinstance(value, types.FunctionType) else value
        owner = value if isinstance(value, type) else type(value)
        method = inspect.getattr_static(owner, self.attr, None)
        plain = method.__wrapped__ if is_to_static_wrapper(method) else method
        if not isinstance(plain, types.FunctionType):
            return value
        self.found, self.qualname = True, plain.__qualname__
        if plain is not method:  # decorated already: its calls are translated as they are
            return value
        if isinstance(value, type):
            setattr(value, self.attr, sot.to_static(method))
        elif isinstance(value, Layer) and self.attr == "forward":
            sot.to_static(value)
        else:
            setattr(value, self.attr, types.MethodType(sot.to_static(method), value))
        return value


def _cmd_explain(args: argparse.Namespace) -> int:
    script, colon, name = args.target.rpartition(":")
    if not colon or not script or not name:
        raise UsageError(f"expected SCRIPT:FUNCTION, got {args.target!r}")
    namespace = _TranslatingNamespace(name)
    status = _run_target(script, None, args.args, namespace)
    functions = report(details=True).function(namespace.qualname)
    if not functions:
        if not namespace.found and "." not in name:
            raise UsageError(f"{script} defines no function {name!r} at its top level")
        if not namespace.found:
            raise UsageError(f"{script} defines no class or object {namespace.head!r} with a method "
                             f"{namespace.attr!r} at its top level")
        raise UsageError(f"{name!r} was not called while {script} ran")
    sys.stdout.write(_explain_text(name, functions))
    return status


def _cmd_bisect(args: argparse.Namespace) -> int:
    script, _, name = args.target.rpartition(":")
    if not script or not os.path.exists(script):
        raise UsageError(f"expected SCRIPT:FUNCTION of an existing script, got {args.target!r}")
    path = os.path.abspath(script)
    sys.path.insert(0, os.path.dirname(path))
    namespace = runpy.run_path(path, run_name="__sot_bisect__")
    fn = namespace.get(name)
    if not callable(fn):
        raise UsageError(f"{script} defines no function {name!r}")
    plain = getattr(fn, "__wrapped__", fn)
    needed = _required_parameters(plain)
    if needed:
        raise UsageError(f"{name} takes arguments ({', '.join(needed)}); sot bisect calls it with none "
                         "(use sot.testing.bisect(fn, *args) in Python)")
    culprit = bisect(plain, rtol=args.rtol, atol=args.atol)
    print(culprit if culprit is not None else f"sot bisect: every compiled subgraph of {name} matches eager")
    return 1 if culprit is not None else 0


def _required_parameters(fn: Callable) -> list[str]:
    """The parameters of `fn` a call without arguments leaves unbound."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _explain_text(name: str, functions: list[FunctionReport]) -> str:
    """Graph and break counts, each reason with its hint, the dims kept static, and per graph its SIR,
    bytecode and Program."""
    graphs = sum(f.graph_count for f in functions)
    breaks = sum(len(f.breaks) for f in functions)
    fallbacks = sum(len(f.fallbacks) for f in functions)
    lines = [f"explain {name}: {graphs} graph(s), {breaks} break(s), {fallbacks} fallback(s)"]
    for f in (f for f in functions if not f.idle):  # (a resume function of a branch never taken)
        lines += ["", f"== {formats.name_of(f)}  {f.where}"]
        for kind, events in (("break", f.breaks), ("eager", f.fallbacks)):
            for same in formats.by_place(events):  # a break met on every translation: once, with its count
                e = same[0]
                lines += [f"  {kind} [{e.code}] {formats.readable(f, e.reason)} ({e.where})"
                          + (f" ({len(same)}x)" if len(same) > 1 else "") + (f"  | {e.source}" if e.source else ""),
                          f"    hint: {REASONS[e.code].hint}"]
        lines += [f"  {kept.text()}" for kept in f.kept_static]
        for g in f.graphs:
            lines += [f"  -- graph of entry {g.entry}: {g.ops} op(s), ran {g.runs}x", _indent(g.sir),
                      "  -- generated bytecode", _indent(g.bytecode or ""), "  -- Program", _indent(g.program or "")]
    return "\n".join(lines) + "\n"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines())


# ----- sot report / sot cache: a saved report -----

def _load(path: str) -> Report:
    if path == _DEFAULT_REPORT and not os.path.exists(path):
        raise UsageError(f"no report given and no {_DEFAULT_REPORT} here (`sot run SCRIPT` writes it; or name one)")
    try:
        return load(path)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _write(path: str, write: Callable[[str], object]) -> None:
    """`write(path)`, an unwritable path being a usage error naming it."""
    try:
        write(path)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror or e}") from None


def _cmd_report(args: argparse.Namespace) -> int:
    current = _load(args.file)
    baseline = _load(args.baseline) if args.baseline else None
    if args.format == "html":
        folder = args.output or "sot-html"
        _write(folder, lambda path: print(f"sot report: {write_html(current, path)}", file=sys.stderr))
    elif args.output:
        _write(args.output, lambda path: Path(path).write_text(formats.render(current, args.format), encoding="utf-8"))
    else:
        sys.stdout.write(formats.render(current, args.format))
    limits = gate.Limits(args.max_breaks, args.max_fallbacks, args.min_captured_ratio, args.max_recompiles)
    violations = gate.check(current, limits, baseline)
    for v in violations:
        print(f"sot report: FAIL: {v}", file=sys.stderr)
    return 1 if violations else 0


def _cmd_cache(args: argparse.Namespace) -> int:
    why = args.words[:1] == ["why"]
    path, name = _report_and_function(args.words[why:], _WHY_USAGE if why else _CACHE_USAGE)
    loaded = _load(path)
    functions = loaded.functions if name is None else _functions(loaded, name)
    sys.stdout.write((formats.why_text if why else formats.cache_text)(functions))
    return 0


def _report_and_function(words: list[str], usage: str) -> tuple[str, str | None]:
    """The report and the function `sot cache` (or `sot cache why`) names, in either order: the report
    is the word naming an existing file, else the one ending in .json; with two words and no such
    telling, the first. No report: sot-report.json; no function: all of them."""
    if len(words) > 2:
        raise UsageError(f"expected: {usage}")
    reports = [w for w in words if os.path.isfile(w)] or [w for w in words if w.endswith(".json")]
    if len(words) == 1:
        return (words[0], None) if reports else (_DEFAULT_REPORT, words[0])
    if not words:
        return _DEFAULT_REPORT, None
    path = reports[0] if len(reports) == 1 else words[0]
    return path, words[1] if path is words[0] else words[0]


def _functions(loaded: Report, name: str) -> list[FunctionReport]:
    found = loaded.function(name)
    if not found:
        raise UsageError(f"no function {name!r} in the report; known: {', '.join(f.qualname for f in loaded.functions)}")
    return found


if __name__ == "__main__":
    sys.exit(main())
