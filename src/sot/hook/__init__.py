"""The PEP 523 frame-evaluation hook: the C extension `sot._eval_frame` and its Python face
(`eval_frame`), through which sot sees, and replaces, the frames a thread runs."""
