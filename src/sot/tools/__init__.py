"""sot.tools: what the JIT did, for people and CI: recording, reports, the `sot` command.

Importing it subscribes the recorder to the translation pipeline's events (see `record`), before
any translator is made: the package root imports it.
"""
from . import record  # noqa: F401 - imported for its subscription
