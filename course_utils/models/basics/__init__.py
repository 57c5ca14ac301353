"""The basics: regression, a scalar autograd engine, activations and feed-forward nets (notebooks 01-03).

- ``activations``: Activation functions g(z) and their derivatives g'(z), written out from scratch.
- ``autograd``: A minimal scalar autograd engine: every ``Value`` remembers how it was made.
- ``feedforward``: Feed-forward networks in the slides' notation, and what they can do that a linear model cannot.
- ``gradcheck``: Check backpropagation against finite differences.
- ``regression``: Linear regression ŷ = Xβ: the analytic solution, gradient descent (plain, momentum, Adam), the PyTorch pair.
"""
