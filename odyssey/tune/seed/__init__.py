"""The mathematical-programming seed: the Pyomo model, its .nl file and the solvers (casadi/Ipopt, SCIP)."""
