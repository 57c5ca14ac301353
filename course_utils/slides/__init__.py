"""The slides wing: the lectures' code run as written, and the slides' worked examples.

- ``slide_attention``: The CSE538 slide's ``SelfAttention`` class, run as written, its bugs fixed one at a time.
- ``slide_generation``: The CSE538 slides' generation pseudocode run as written, and J&M's yes/ok search tree.
"""
