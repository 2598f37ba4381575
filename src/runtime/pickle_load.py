"""Read the pickle files that real Paddle's `paddle.save` writes, without letting a file run code.

Real Paddle pickles a state dict as `{key: ndarray, ..., "StructuredToParameterName@@": {key:
parameter name}}`, and any other object with each Tensor reduced to `tuple(((name, ndarray),))`.
Unpickling calls whatever global a file names, so `_RestrictedUnpickler.find_class` resolves only
the globals those files use: NumPy's array, dtype and scalar reconstructors (NumPy 1.x and 2.x
module paths), the Python containers, and `_codecs.encode` for latin-1 text (how protocol 2
writes bytes). Any other global is refused with `PaddlePickleError` naming it, before anything
is called; this is the approach of `torch.load(weights_only=True)`. What those globals build is
data, which `_to_paddle` then turns into Tensors exactly as `paddle.load` does.
"""
from __future__ import annotations

import _compat_pickle
import codecs
import collections
import io
import pickle
from typing import Any, Callable

import numpy as np

from .place import current_place, move
from .tensor import Tensor

__all__ = ["PaddlePickleError", "is_pickle", "load_pickle", "load_plain"]

_NAME_TABLE = "StructuredToParameterName@@"
_BIG_PARAMS = "UnpackBigParamInfor@@"  # Paddle's spelling: protocol 2/3 split arrays over 1 GiB into slices


class PaddlePickleError(pickle.UnpicklingError, ValueError):
    """A pickle paddle.load will not read: it names a global outside the allowed set, or it is
    malformed. A ValueError too, as for every other file paddle.load cannot parse."""


# The two wrappers below raise ValueError; load_pickle reports it with the file's path.
def _latin1_encode(text: str, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """`_codecs.encode` as protocol 2 uses it for bytes (latin-1 only: other codecs are code paths
    a checkpoint never needs)."""
    if not isinstance(encoding, str) or codecs.lookup(encoding).name != "iso8859-1" or not isinstance(text, str):
        raise ValueError(f"_codecs.encode is only allowed for latin-1 text, not {encoding!r}")
    return codecs.encode(text, encoding, errors)


def _empty_bytes(*args: Any) -> bytes:
    """`bytes()` as protocol 2 writes b''; bytes(n) could allocate any size, so no arguments."""
    if args:
        raise ValueError("builtins.bytes is only allowed without arguments (protocol 2's b'')")
    return b""


def _allowed_globals() -> dict[tuple[str, str], Any]:
    # the reconstructors as this NumPy names them; files written under NumPy 1.x name numpy.core,
    # under 2.x numpy._core: both resolve to the installed functions, never by importing a path
    reconstruct = np.ndarray.__reduce__(np.zeros(1))[0]
    scalar = np.float32(0).__reduce__()[0]
    allowed: dict[tuple[str, str], Any] = {
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("_codecs", "encode"): _latin1_encode,
        ("builtins", "bytes"): _empty_bytes,
    }
    for core in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(core, "_reconstruct")] = reconstruct
        allowed[(core, "scalar")] = scalar
    for container in (tuple, list, dict, set, frozenset, complex):
        allowed[("builtins", container.__name__)] = container
    # protocol 2 writes Python 3's builtins under their Python 2 module name
    allowed.update({("__builtin__", name): obj for (module, name), obj in list(allowed.items())
                    if module == "builtins"})
    return allowed


_ALLOWED = _allowed_globals()


class _RestrictedUnpickler(pickle.Unpickler):
    """An Unpickler whose globals come only from `_ALLOWED`."""

    def __init__(self, file: io.BytesIO, where: str):
        super().__init__(file, encoding="latin1")  # Paddle reads Python 2 era files this way
        self.where = where

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            pass
        # protocol 2 writes Python 2 names; say what Python 3 would have resolved as well
        py3 = _compat_pickle.NAME_MAPPING.get((module, name))
        py3 = py3 or (_compat_pickle.IMPORT_MAPPING.get(module, module), name)
        alias = f" (Python 3's '{py3[0]}.{py3[1]}')" if py3 != (module, name) else ""
        raise PaddlePickleError(
            f"load: {self.where} asks to unpickle the global '{module}.{name}'{alias}, which paddle.load refuses: "
            "a Paddle checkpoint holds only NumPy arrays, numbers, strings and containers, and unpickling "
            "anything else could run code")

    def persistent_load(self, pid: Any) -> Any:
        raise PaddlePickleError(f"load: {self.where} holds a persistent id ({pid!r}); Paddle never writes one")


def load_plain(data: bytes, where: str) -> Any:
    """Unpickle `data` with the same allowed globals, as plain data and NumPy arrays (no Tensors):
    for other pickled files Paddle reads, such as the Cifar batches."""
    return _RestrictedUnpickler(io.BytesIO(data), where).load()


def is_pickle(data: bytes) -> bool:
    """Whether `data` starts like a pickle of protocol 2 or later (what paddle.save writes)."""
    return len(data) > 1 and data[0] == 0x80 and 2 <= data[1] <= 5


def _join_big_params(obj: dict, bad: Callable[[str], PaddlePickleError]) -> None:
    """Put back the arrays protocol 2/3 files split into slices, as Paddle's load does."""
    info = obj.pop(_BIG_PARAMS, None)
    if info is None:
        return
    if not isinstance(info, dict):
        raise bad(f"{_BIG_PARAMS!r} is not a dict")
    for key, entry in info.items():
        try:
            parts = [obj.pop(part) for part in entry["slices"]]
            obj[key] = np.concatenate(parts).reshape(entry["OriginShape"])
        except (KeyError, TypeError, ValueError) as e:
            raise bad(f"the slices of {key!r} cannot be joined ({e!r})") from None


def _tensor(arr: np.ndarray, name: Any = None) -> Tensor:
    out = Tensor._wrap(move(arr, current_place()))  # on the default place, stop_gradient=True, as Paddle's to_tensor
    if name is not None:
        out.name = name
    return out


def _is_named_array(obj: Any) -> bool:
    """(name, ndarray): how Paddle 2.1+ pickles a Tensor outside a state dict."""
    return type(obj) is tuple and len(obj) == 2 and isinstance(obj[0], str) and isinstance(obj[1], np.ndarray)


def _contains(obj: Any, test: Callable[[Any], bool]) -> bool:
    if test(obj):
        return True
    if type(obj) in (dict, collections.OrderedDict):
        return any(_contains(v, test) for v in dict.values(obj))
    if type(obj) in (list, tuple):
        return any(_contains(v, test) for v in obj)
    return False


def _replace(obj: Any, test: Callable[[Any], bool], convert: Callable[[Any], Any]) -> Any:
    """`obj` with every part that passes `test` converted; dicts and lists are changed in place
    (as Paddle's load does), so parts the file shares stay shared."""
    if test(obj):
        return convert(obj)
    if type(obj) in (dict, collections.OrderedDict):
        for k, v in list(dict.items(obj)):
            obj[k] = _replace(v, test, convert)
    elif type(obj) is list:
        obj[:] = [_replace(v, test, convert) for v in obj]
    elif type(obj) is tuple:
        return tuple(_replace(v, test, convert) for v in obj)
    elif type(obj) in (set, frozenset):
        return type(obj)(_replace(v, test, convert) for v in obj)
    return obj


def _check_plain(obj: Any, bad: Callable[[str], PaddlePickleError]) -> None:
    """Refuse attributes set on an OrderedDict (a pickle may BUILD any state onto it): they could
    shadow its methods; no other allowed type can hold attributes."""
    if type(obj) is collections.OrderedDict and vars(obj):
        raise bad(f"an OrderedDict carries attributes {sorted(vars(obj))}")
    if type(obj) in (dict, collections.OrderedDict):
        for v in dict.values(obj):
            _check_plain(v, bad)
    elif type(obj) in (list, tuple, set, frozenset):
        for v in obj:
            _check_plain(v, bad)


def _to_paddle(obj: Any, return_numpy: bool, keep_name_table: bool, bad: Callable[[str], PaddlePickleError]) -> Any:
    """What paddle.load returns for the unpickled `obj` (Paddle's rules, step by step)."""
    if isinstance(obj, dict):
        _join_big_params(obj, bad)
        if _NAME_TABLE in obj:
            # a state dict: the arrays the table names become Tensors carrying the parameter's name
            table = obj[_NAME_TABLE]
            if not isinstance(table, dict):
                raise bad(f"{_NAME_TABLE!r} is not a dict")
            for key, name in table.items():
                if key not in obj:
                    raise bad(f"{_NAME_TABLE!r} names {key!r}, which the file does not hold")
                if not isinstance(name, str):
                    raise bad(f"the parameter name of {key!r} is a {type(name).__name__}")
                if isinstance(obj[key], np.ndarray) and not return_numpy:
                    obj[key] = _tensor(obj[key], name)
            if not keep_name_table:
                del obj[_NAME_TABLE]
            return obj
    if _contains(obj, _is_named_array):
        # every (name, ndarray) pair is a Tensor; other arrays stay arrays
        return _replace(obj, _is_named_array, (lambda t: t[1]) if return_numpy else (lambda t: _tensor(t[1], t[0])))
    # no pairs: an object saved from bare arrays, and each array becomes a Tensor
    return obj if return_numpy else _replace(obj, lambda v: isinstance(v, np.ndarray), _tensor)


def load_pickle(data: bytes, where: str, return_numpy: bool = False, keep_name_table: bool = False) -> Any:
    """The object a Paddle pickle holds, as paddle.load returns it; a file that names any other
    global, or is malformed, raises PaddlePickleError without running anything from it."""

    def bad(what: str) -> PaddlePickleError:
        return PaddlePickleError(f"load: {where} is not a Paddle checkpoint paddle.load can read: {what}")

    try:
        obj = _RestrictedUnpickler(io.BytesIO(data), where).load()
    except PaddlePickleError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError, RecursionError, UnicodeError) as e:
        raise bad(f"unpickling failed ({type(e).__name__}: {e})") from None
    try:
        _check_plain(obj, bad)
        return _to_paddle(obj, return_numpy, keep_name_table, bad)
    except RecursionError:
        raise bad("it nests too deeply or contains itself") from None
