"""`paddle.metric`: the accuracy op and the streaming metrics of Paddle's high-level API."""
from .metrics import Accuracy, Metric, Precision, Recall, accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "accuracy"]
