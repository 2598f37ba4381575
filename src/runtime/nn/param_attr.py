"""`paddle.ParamAttr`: how a layer creates one parameter (name, initialiser, learning rate...)."""
from __future__ import annotations

import copy
from typing import Any

from ..regularizer import WeightDecayRegularizer
from .initializer import Initializer

__all__ = ["ParamAttr"]


class ParamAttr:
    """Creation settings of a parameter; `weight_attr=False` / `bias_attr=False` means "no parameter"."""

    def __init__(self, name: str | None = None, initializer: Any = None, learning_rate: float = 1.0,
                 regularizer: Any = None, trainable: bool = True, do_model_average: bool = True,
                 need_clip: bool = True):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"ParamAttr: argument 'name' must be a str or None, got {type(name).__name__}")
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
            raise TypeError(f"ParamAttr: argument 'learning_rate' must be a float, got {type(learning_rate).__name__}")
        for arg, value in (("trainable", trainable), ("do_model_average", do_model_average),
                           ("need_clip", need_clip)):
            if not isinstance(value, bool):
                raise TypeError(f"ParamAttr: argument '{arg}' must be a bool, got {type(value).__name__}")
        if initializer is not None and not isinstance(initializer, Initializer):
            raise TypeError(f"ParamAttr: argument 'initializer' must be a paddle.nn.initializer.Initializer, "
                            f"got {type(initializer).__name__}")
        if regularizer is not None and not isinstance(regularizer, WeightDecayRegularizer):
            raise TypeError(f"ParamAttr: argument 'regularizer' must be a paddle.regularizer.L1Decay/L2Decay, "
                            f"got {type(regularizer).__name__}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = learning_rate
        self.regularizer = regularizer
        self.trainable = trainable
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    def _set_default_initializer(self, initializer: Any) -> None:
        if self.initializer is None:
            self.initializer = initializer

    @staticmethod
    def _to_attr(arg: Any) -> "ParamAttr | bool | list":
        """Normalise what `weight_attr` / `bias_attr` accept: None, str, Initializer, regularizer, bool, ParamAttr."""
        if arg is None:
            return ParamAttr()
        if isinstance(arg, (list, tuple)):
            return [ParamAttr._to_attr(a) for a in arg]
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        if isinstance(arg, WeightDecayRegularizer):
            return ParamAttr(regularizer=arg)
        if isinstance(arg, bool):
            return ParamAttr() if arg else False
        raise TypeError(f"a parameter attribute must be None, a str, a bool, an Initializer or a ParamAttr, "
                        f"got {type(arg).__name__}")

    def __deepcopy__(self, memo: dict) -> "ParamAttr":
        # initialisers and regularizers are immutable settings: share them
        new = copy.copy(self)
        memo[id(self)] = new
        return new

    def __repr__(self) -> str:
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, trainable={self.trainable})")
