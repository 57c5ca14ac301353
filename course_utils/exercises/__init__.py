"""Self-check functions for the notebooks' exercises, one module per notebook.

A check prints one friendly line, ✓ or ✗ with a hint, and returns True or False. It never
raises on a wrong, unfinished (None) or crashing answer, so "Restart and run all" always works.
"""


def verdict(ok: bool, message: str) -> bool:
    """Print ``✓ message`` or ``✗ message`` and return ``ok``."""
    print(("✓ " if ok else "✗ ") + message)
    return ok
