"""Declares sot's C extension (the PEP 523 hook); pyproject.toml holds the package metadata."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("sot._eval_frame", ["src/sot/_eval_frame.c"])])
