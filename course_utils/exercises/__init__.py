"""Self-check functions for the notebooks' exercises, one module per notebook."""
