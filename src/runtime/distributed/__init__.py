"""`paddle.distributed` for one process: model and training scripts that call the distributed API
(rank queries, `init_parallel_env`, `DataParallel`, collectives) run unchanged as a world of one.

There is no multi-process support: no launcher, no process groups, no fleet. A collective on one
process leaves its tensor as it is, which is what it computes in a world of one."""
from .collective import ReduceOp, all_gather, all_reduce, barrier, broadcast, reduce
from .parallel import (DataParallel, ParallelEnv, get_rank, get_world_size, init_parallel_env,
                       is_available, is_initialized)

__all__ = ["DataParallel", "ParallelEnv", "ReduceOp", "all_gather", "all_reduce", "barrier", "broadcast",
           "get_rank", "get_world_size", "init_parallel_env", "is_available", "is_initialized", "reduce"]
