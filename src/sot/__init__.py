"""sot: a bytecode-level JIT for eager `runtime` model code, with subgraph fallback.

The JIT itself lands with the next issues; the package exists so the layout is fixed.
"""
__version__ = "0.1.0"
