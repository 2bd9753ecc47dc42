"""Multi-fidelity Bayesian optimization: the surrogate, the acquisitions and the expensive fidelities (docs/mfbo.md)."""
