"""Collectives on a world of one process: every reduction, broadcast and gather leaves the tensor as
it is (its only contribution is its own); `all_gather` fills the list with it."""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor

__all__ = ["ReduceOp", "all_gather", "all_reduce", "barrier", "broadcast", "reduce"]


class ReduceOp:
    """How `all_reduce` / `reduce` combine the processes' tensors (Paddle's values)."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_OPS = (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD, ReduceOp.AVG)


def _check(api: str, tensor: Any, op: Any = ReduceOp.SUM) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{api}: argument 'tensor' must be a Tensor, got {type(tensor).__name__}")
    if op not in _OPS:
        raise ValueError(f"{api}: argument 'op' must be one of paddle.distributed.ReduceOp, got {op!r}")


def _check_rank(api: str, arg: str, rank: Any) -> None:
    if rank != 0:
        raise ValueError(f"{api}: argument '{arg}' must be 0 in a world of one process, got {rank!r}")


def all_reduce(tensor: Tensor, op: int = ReduceOp.SUM, group: Any = None, sync_op: bool = True) -> None:
    """Reduce `tensor` over every process, in place: unchanged on one process."""
    _check("all_reduce", tensor, op)


def reduce(tensor: Tensor, dst: int, op: int = ReduceOp.SUM, group: Any = None, sync_op: bool = True) -> None:
    """Reduce `tensor` onto rank `dst`, in place: unchanged on one process."""
    _check("reduce", tensor, op)
    _check_rank("reduce", "dst", dst)


def broadcast(tensor: Tensor, src: int, group: Any = None, sync_op: bool = True) -> None:
    """Copy rank `src`'s `tensor` to every process: unchanged on one process."""
    _check("broadcast", tensor)
    _check_rank("broadcast", "src", src)


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None, sync_op: bool = True) -> None:
    """Append every process's `tensor` to `tensor_list` (here: this one's)."""
    _check("all_gather", tensor)
    if not isinstance(tensor_list, list):
        raise TypeError(f"all_gather: argument 'tensor_list' must be a list, got {type(tensor_list).__name__}")
    tensor_list.append(tensor)


def barrier(group: Any = None) -> None:
    """Wait for every process: returns at once on one process."""
