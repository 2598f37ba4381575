"""A compiled call that fails at run time runs its frame again, eagerly.

A kernel can fail on values no meta function sees (an integer tensor raised to a negative
power): the compiled Program then raises inside the one CALL the generated code makes, so the
traceback would stop at the function's `def` line, and a `try`/`except` around the op in the
user's code could not catch it (the generated code has no such handler). Nothing observable has
happened when a compiled SIR fails: its outputs, its writes into bound tensors and the recorded
side effects all come after it. So the generated code catches the exception and calls the
original code once more, eagerly, with the same arguments: eager code then raises (or catches)
what it raises, with its traceback through the user's lines. Only an `Exception` does this; a
KeyboardInterrupt or SystemExit goes on as it is.

    body, table = guarded_call(call, code, rerun_after)
    handler, entry = rerun_handler(call, code, rerun_after)

`call` is the generated instructions from the first call slot to the CALL of the runner (the
RETURN_VALUE after it is not included); `body` is them, the RETURN_VALUE and the handler, and
`table` the exception entry protecting `call`. The compiled graph a graph break runs first (before
anything else of the frame ran) is protected the same way: `rerun_handler` gives the handler alone
and its entry, for code that goes on after the call. The handler leaves the `except` state before
re-running, so eager's exception carries no link to the compiled one. `rerun_after(error)` says
whether to re-run (False: something observable may have happened, the error goes on as it is)
and records the re-run (the translator does). The eager run calls its callees as the frame's
original code would under the generated code: with the eval-frame hook off.

A random op in the failed graph has drawn from the generator before the eager run draws again:
a seeded run that fails at run time draws differently from a purely eager one.
"""
from __future__ import annotations

import inspect
import sys
import types
import weakref
from typing import Any, Callable

from sot.pyversion import ExceptionEntry, Instruction, with_null

__all__ = ["guarded_call", "rerun_handler"]


def guarded_call(call: list[Instruction], code: types.CodeType,
                 rerun_after: Callable[[Exception], bool]) -> tuple[list[Instruction], tuple[ExceptionEntry, ...]]:
    """`call` followed by RETURN_VALUE, and a handler that returns the eager re-run's result instead."""
    handler, entry = rerun_handler(call, code, rerun_after)
    return [*call, Instruction("RETURN_VALUE"), *handler], (entry,)


def rerun_handler(call: list[Instruction], code: types.CodeType,
                  rerun_after: Callable[[Exception], bool]) -> tuple[list[Instruction], ExceptionEntry]:
    """The handler returning the eager re-run's result when `call` (entered with an empty stack) raises,
    and the exception entry protecting `call` with it."""
    handler = Instruction("PUSH_EXC_INFO")
    body = [handler,                                    # prev, error
            Instruction("SWAP", arg=2, argval=2),       # error, prev
            Instruction("POP_EXCEPT"),                  # error (the except state is left)
            *reversed(with_null([Instruction("LOAD_CONST", argval=_rerunner(code, rerun_after))])),
            Instruction("SWAP", arg=3, argval=3)]       # the call slots, error
    names = _parameters(code)
    body += [Instruction("LOAD_FAST", argval=name) for name in names]
    body += [Instruction("LOAD_CLOSURE", argval=name) for name in code.co_freevars]
    n_args = 1 + len(names) + len(code.co_freevars)
    body += [Instruction("CALL", arg=n_args, argval=n_args), Instruction("RETURN_VALUE")]
    return body, ExceptionEntry(call[0], call[-1], handler, depth=0, lasti=False)


def _parameters(code: types.CodeType) -> tuple[str, ...]:
    """The names of the code's parameters: positional, keyword-only, *args, **kwargs."""
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:n]


def _rerunner(code: types.CodeType, rerun_after: Callable[[Exception], bool]) -> Callable[..., Any]:
    """`rerun(error, *parameters, *closure cells)`: the original code called eagerly on them (its globals
    are the generated frame's). The code is held weakly: the generated code lives in its cache."""
    original, name = weakref.ref(code), code.co_name
    n_positional, n_kwonly = code.co_argcount, code.co_kwonlyargcount
    kwonly = code.co_varnames[n_positional:n_positional + n_kwonly]
    varargs, varkw = bool(code.co_flags & inspect.CO_VARARGS), bool(code.co_flags & inspect.CO_VARKEYWORDS)
    n_parameters = len(_parameters(code))

    def rerun(error: BaseException, *values: Any) -> Any:
        if not isinstance(error, Exception) or not rerun_after(error):
            raise error
        del error
        args = values[:n_positional]
        kwargs = dict(zip(kwonly, values[n_positional:n_positional + n_kwonly]))
        at = n_positional + n_kwonly
        if varargs:
            args += values[at]
            at += 1
        if varkw:
            kwargs.update(values[at])
        fn = types.FunctionType(original(), sys._getframe(1).f_globals, name, None,
                                tuple(values[n_parameters:]) or None)
        return fn(*args, **kwargs)
    return rerun
