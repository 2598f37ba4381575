"""The program a core runs: the user's program after the front end's passes (a copy; the user's
Program never changes), with one `feed` op per fed var first and one `fetch` op per fetch target
last, the in-place pairs the passes marked renumbered for the added ops."""
from __future__ import annotations

from typing import Sequence

from .plan import FEED_OP, FETCH_OP
from .program import InplacePairs, Program, frontend

__all__ = ["prepare_program"]


def prepare_program(program: Program, feed_names: Sequence[str], fetch_names: Sequence[str],
                    feed_var_name: str = "feed", fetch_var_name: str = "fetch") -> tuple[Program, InplacePairs]:
    """The program a core runs: a pass-optimised copy with feed ops first and fetch ops last."""
    fe = frontend()
    protected = {*feed_names, *fetch_names, *(v.name for v in program.list_vars() if v.persistable)}
    new, pairs = fe.optimize(program, protected)
    block = new.global_block()
    marks = {id(block.ops[i]): pair for i, pair in pairs.items()}
    user_block = program.global_block()
    for name in (*feed_names, *fetch_names):
        if name not in block.vars:  # e.g. a fed var no op reads, dropped by dead-op elimination
            v = user_block.var(name)
            block.create_var(name, v._shape, v._np_dtype, v.persistable, v.stop_gradient, v.is_parameter,
                             v.need_check_feed)
    for holder in (feed_var_name, fetch_var_name):
        if holder not in block.vars:
            block.create_var(holder, (), "float32", persistable=True)
    feeds = [fe.operator(block, FEED_OP, [feed_var_name], [n], {"col": i}, "<feed>") for i, n in enumerate(feed_names)]
    fetches = [fe.operator(block, FETCH_OP, [n], [fetch_var_name], {"col": i}, "<fetch>")
               for i, n in enumerate(fetch_names)]
    block.ops = feeds + block.ops + fetches
    new._changed()
    return new, {i: marks[id(op)] for i, op in enumerate(block.ops) if id(op) in marks}
