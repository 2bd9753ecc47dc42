"""The exact optimum: branch and bound with interval bounds on the model's expressions (docs/optimum.md)."""
