"""The CPython versions sot supports, as named constants: every version check in sot reads these."""
import sys

PY_VERSION: tuple[int, int] = sys.version_info[:2]
PY311: bool = PY_VERSION == (3, 11)
PY312: bool = PY_VERSION == (3, 12)
PY313: bool = PY_VERSION == (3, 13)
SUPPORTED: bool = PY311 or PY312 or PY313

if not SUPPORTED:
    raise ImportError(f"sot supports CPython 3.11-3.13, not {sys.version.split()[0]}")
