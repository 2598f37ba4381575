"""paddle.save / paddle.load for state dicts, without unpickling arbitrary objects."""
__all__: list[str] = []
