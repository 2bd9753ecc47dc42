"""Small numpy neural networks for the learning baselines (RL, N-A2C, Mind Mappings).

:class:`MLP` is a fully connected network, ``tanh`` on hidden layers and a linear
output, with hand-written backpropagation; :class:`Adam` updates its weights. The
networks are a few thousand weights: numpy on one core is fast enough, and no
deep-learning framework becomes a dependency.

Backpropagation, for a layer ``z = h W + b`` followed by ``h' = tanh(z)``:
``dL/dW = h^T dL/dz``, ``dL/db = sum_rows dL/dz``, ``dL/dh = dL/dz W^T`` and
``dL/dz = dL/dh' * (1 - h'^2)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from odyssey.errors import TunerError


@dataclass(frozen=True, slots=True)
class Forward:
    """The activations of one forward pass (inputs of every layer, then the output)."""

    activations: tuple[np.ndarray, ...]

    @property
    def output(self) -> np.ndarray:
        return self.activations[-1]


class MLP:
    """``sizes = (inputs, hidden..., outputs)``; weights ``N(0, 1/fan_in)``, biases 0.

    ``output_scale`` shrinks the last layer's initial weights (0.1 makes an initial
    policy close to uniform).
    """

    def __init__(
        self, sizes: Sequence[int], rng: np.random.Generator, *, output_scale: float = 1.0
    ) -> None:
        if len(sizes) < 2 or any(int(s) < 1 for s in sizes):
            raise TunerError(f"MLP sizes must be >= 2 positive integers, got {list(sizes)!r}.")
        self.sizes = tuple(int(s) for s in sizes)
        self.params: list[np.ndarray] = []
        last = len(self.sizes) - 2
        for k, (a, b) in enumerate(zip(self.sizes, self.sizes[1:], strict=False)):
            scale = (output_scale if k == last else 1.0) / np.sqrt(a)
            self.params.append(rng.normal(0.0, scale, size=(a, b)))
            self.params.append(np.zeros(b))

    def forward(self, x: np.ndarray) -> Forward:
        """Outputs for the rows of ``x`` (shape ``(n, inputs)``), with the activations."""
        h = np.asarray(x, dtype=np.float64)
        acts = [h]
        n_layers = len(self.params) // 2
        for k in range(n_layers):
            z = h @ self.params[2 * k] + self.params[2 * k + 1]
            h = np.tanh(z) if k < n_layers - 1 else z
            acts.append(h)
        return Forward(tuple(acts))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.forward(x).output

    def backward(
        self, fwd: Forward, grad_out: np.ndarray
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Gradients of a loss w.r.t. the weights (in :attr:`params` order) and the input,
        given ``grad_out = dL/d output`` (summed over rows, not averaged)."""
        n_layers = len(self.params) // 2
        grads: list[np.ndarray] = [np.empty(0)] * len(self.params)
        g = np.asarray(grad_out, dtype=np.float64)
        for k in range(n_layers - 1, -1, -1):
            if k < n_layers - 1:
                g = g * (1.0 - fwd.activations[k + 1] ** 2)  # through tanh
            grads[2 * k] = fwd.activations[k].T @ g
            grads[2 * k + 1] = g.sum(axis=0)
            g = g @ self.params[2 * k].T
        return grads, g


class Adam:
    """Adam (Kingma & Ba) on a list of arrays, updated in place; ``lr`` the step size."""

    def __init__(
        self, params: list[np.ndarray], *, lr: float = 1e-3, beta1: float = 0.9,
        beta2: float = 0.999, eps: float = 1e-8,
    ) -> None:
        self.params = params
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self._m = [np.zeros_like(p) for p in params]
        self._v = [np.zeros_like(p) for p in params]
        self._t = 0

    def step(self, grads: Sequence[np.ndarray]) -> None:
        """Move every parameter against its gradient (minimisation)."""
        self._t += 1
        c1 = 1.0 - self.beta1**self._t
        c2 = 1.0 - self.beta2**self._t
        for p, g, m, v in zip(self.params, grads, self._m, self._v, strict=True):
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row-wise softmax over the entries where ``mask`` is True (others get probability 0).

    Every row needs at least one allowed entry.
    """
    z = np.where(mask, logits, -np.inf)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def sample_categorical(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row of ``probs`` (non-negative rows, each with a positive entry), by
    inverse transform sampling; an entry of probability 0 is never drawn."""
    cum = np.cumsum(probs, axis=1)
    u = rng.random((probs.shape[0], 1)) * cum[:, -1:]
    return (cum <= u).sum(axis=1)
