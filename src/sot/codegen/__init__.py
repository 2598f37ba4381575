"""Code generation: the bytecode a translated frame runs (its return path, the resume functions
and loop bodies of a graph break, the eager re-run of a call whose compiled graph failed)."""
