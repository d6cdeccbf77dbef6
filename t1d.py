import sys; sys.path.insert(0, "/tmp/sweepA")
from harness import run
S = """import sympy as sp, numpy as np
from mhanw.data import regression_function as rf
x1 = sp.Symbol("x1", real=True)
"""
cases = [
 'rf(sp.Add(*[sp.sin(k*x1) for k in range(1, 20001)])).lipschitz_source',
 'rf(sp.Add(*[sp.Symbol(f"x{i}")**2 for i in range(1, 4097)])).lipschitz_source',
 'rf(sp.Add(*[sp.sin(sp.Symbol(f"x{i}")) for i in range(1, 4097)])).lipschitz_source',
 'rf(sp.Mul(*[sp.cos(sp.Symbol(f"x{i}")) for i in range(1, 200)])).lipschitz_source',
 'rf(sp.Piecewise((x1, x1 > 0), (0, True)))',
 'rf(sp.Symbol("x1", complex=True) * sp.I)',
 'rf(sp.Symbol("y"))',
 'rf(sp.Function("f")(x1))',
 'rf(sp.Eq(x1, 1))',
 'rf(sp.Matrix([x1]))',
 'rf(sp.Integral(x1, x1))',
 'rf(sp.Float("nan") + x1)',
 'rf(sp.zoo * x1)',
 'rf(x1 ** sp.Integer(10)**6)',
 'rf(sp.Pow(x1, sp.Integer(10)**6, evaluate=False))',
 'rf(sp.besselj(x1, x1))',
 'rf(sp.gamma(x1))',
 'rf(sp.exp(x1)**100)',
 'rf(sp.Pow(sp.exp(x1), 100, evaluate=False)).lipschitz_source',
 'rf(sp.exp(100*x1))',
 'rf(sp.exp(x1*sp.Integer(10)**5, evaluate=False))',
 'rf("exp(x1)**100")',
 'rf("exp(x1)^2^2^2")',
 'rf("(exp(x1)**10)**10")',
 'rf("exp(10*x1)**10")',
]
run(cases, setup=S, timeout=60)
