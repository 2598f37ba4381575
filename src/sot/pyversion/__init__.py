"""sot.pyversion: the only place in sot that knows CPython versions.

Interface (everything downstream — opcode executor, codegen — uses only these):

- `decode(code) -> NormalisedCode`: the bytecode of a 3.11/3.12/3.13 code object as ONE
  instruction model. `NormalisedCode.instructions` is a tuple of `Instruction`s whose opnames
  are in `OPNAMES` (no PRECALL, KW_NAMES, CALL_KW, LOAD_METHOD, superinstructions, RETURN_CONST,
  END_FOR, FORWARD/BACKWARD jump variants, CACHE or EXTENDED_ARG); jump targets and exception
  entries (`ExceptionEntry`: start, end, target, depth, lasti) point at `Instruction`s;
  `NormalisedCode.meta` (`CodeMeta`) is the code object's names, argument layout and variables.
  Bytecode outside the model raises `DecodeError` (a reason to run a frame eagerly).
- `encode(normalised, template=None) -> CodeType`: a code object for the running interpreter
  (metadata from `template` when given, else from `normalised.meta`); `EncodeError` when an
  instruction has no spelling on this version (e.g. LOAD_SUPER_ATTR on 3.11).
- `with_null(load)` / `call_slots(callable, null)`: a callable with the NULL slot CALL expects, in the
  running version's order (generated code and the simulated stack alike).
- `versions`: PY311 / PY312 / PY313; every version check in sot reads these.

docs/sot-internals.md ("Bytecode normalisation") tabulates the model against each version.
"""
from . import versions
from .calls import call_slots, with_null
from .decode import decode
from .encode import encode
from .instruction import (OPNAMES, CodeMeta, DecodeError, EncodeError, ExceptionEntry,
                          Instruction, NormalisedCode)

__all__ = ["decode", "encode", "versions", "call_slots", "with_null", "OPNAMES", "CodeMeta", "DecodeError", "EncodeError",
           "ExceptionEntry", "Instruction", "NormalisedCode"]
