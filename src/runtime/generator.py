"""The random generator behind every random op: `paddle.seed`, get/set_rng_state.

One process-wide `Generator` (NumPy's PCG64) feeds every random kernel, on CPU and GPU
alike (GPU kernels draw on the host and copy), so a seed gives the same values on every
device. Random kernels fetch it lazily through `default_generator()`.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

__all__ = ["seed", "get_rng_state", "set_rng_state", "get_cuda_rng_state", "set_cuda_rng_state"]

_UINT64 = (1 << 64) - 1


class GeneratorState:
    """A snapshot of a generator (opaque to users, as Paddle's `core.GeneratorState`)."""

    __slots__ = ("_state", "_seed")

    def __init__(self, state: dict, seed_value: int):
        self._state = state
        self._seed = seed_value

    def __repr__(self) -> str:
        return f"GeneratorState(seed={self._seed})"


def _check_seed(value: Any, api: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{api}: argument 'seed' must be an int, got {type(value).__name__}")
    return int(value) & _UINT64  # negative seeds wrap as Paddle's uint64 seeds do


class Generator:
    """A seeded stream of random numbers (wraps `numpy.random.Generator` over PCG64)."""

    __slots__ = ("_seed", "rng")

    def __init__(self, seed: int | None = None):
        if seed is None:
            seed = int(np.random.SeedSequence().entropy) & _UINT64
        self._seed = _check_seed(seed, "Generator")
        self.rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> "Generator":
        """Restart the stream from `seed`; returns the generator."""
        self._seed = _check_seed(seed, "manual_seed")
        self.rng.bit_generator.state = np.random.PCG64(self._seed).state
        return self

    def seed(self) -> int:
        """Reseed from OS entropy and return the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy) & _UINT64)
        return self._seed

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._seed

    def get_state(self) -> GeneratorState:
        """A snapshot that `set_state` restores exactly."""
        return GeneratorState(copy.deepcopy(self.rng.bit_generator.state), self._seed)

    def set_state(self, state: GeneratorState) -> "Generator":
        if not isinstance(state, GeneratorState):
            raise TypeError(f"set_state: expected a GeneratorState from get_state(), got {type(state).__name__}")
        self.rng.bit_generator.state = copy.deepcopy(state._state)
        self._seed = state._seed
        return self

    def random(self) -> int:
        """One raw 64-bit random integer."""
        return int(self.rng.integers(0, _UINT64, dtype=np.uint64, endpoint=True))

    def __repr__(self) -> str:
        return f"Generator(seed={self._seed})"


_DEFAULT = Generator()


def default_generator() -> Generator:
    """The process-wide generator every random op draws from."""
    return _DEFAULT


def seed(seed: int) -> Generator:
    """Seed the global generator (paddle.seed): the same seed gives the same random values."""
    return _DEFAULT.manual_seed(_check_seed(seed, "seed"))


def get_rng_state(device: Any = None) -> list[GeneratorState]:
    """The state of the generator(s), as a list to pass to `set_rng_state`."""
    return [_DEFAULT.get_state()]


def set_rng_state(state_list: Any, device: Any = None) -> None:
    """Restore a state list from `get_rng_state` (one shared generator serves every device)."""
    if isinstance(state_list, GeneratorState):
        state_list = [state_list]
    if not isinstance(state_list, (list, tuple)) or len(state_list) != 1:
        raise ValueError("set_rng_state: argument 'state_list' must be the list returned by get_rng_state(), "
                         f"got {type(state_list).__name__}"
                         f"{' of length ' + str(len(state_list)) if isinstance(state_list, (list, tuple)) else ''}")
    _DEFAULT.set_state(state_list[0])


get_cuda_rng_state = get_rng_state
set_cuda_rng_state = set_rng_state
