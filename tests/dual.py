"""Forward-mode dual numbers for the closed-form references of the tests: a value and its
gradient with respect to a few parameters, carried exactly through +, −, ×, ÷ and the
elementary functions the closed forms need. Differentiating a closed form this way gives its
exact derivative (to round-off), an independent reference for the library's sensitivities."""
import math


class Dual:
    __slots__ = ("v", "d")

    def __init__(self, v, d=None, n=0):
        self.v = float(v)
        self.d = list(d) if d is not None else [0.0] * n

    @staticmethod
    def variable(value, index, n):
        d = [0.0] * n
        d[index] = 1.0
        return Dual(value, d)

    def _lift(self, o):
        return o if isinstance(o, Dual) else Dual(o, n=len(self.d))

    def __add__(self, o):
        o = self._lift(o)
        return Dual(self.v + o.v, [a + b for a, b in zip(self.d, o.d)])

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.v, [-a for a in self.d])

    def __sub__(self, o):
        return self + (-self._lift(o))

    def __rsub__(self, o):
        return self._lift(o) - self

    def __mul__(self, o):
        o = self._lift(o)
        return Dual(self.v * o.v, [self.v * b + o.v * a for a, b in zip(self.d, o.d)])

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = self._lift(o)
        return Dual(self.v / o.v, [(a * o.v - self.v * b) / (o.v * o.v) for a, b in zip(self.d, o.d)])

    def __rtruediv__(self, o):
        return self._lift(o) / self

    def __pow__(self, k):  # integer or real constant exponent
        return Dual(self.v ** k, [k * self.v ** (k - 1) * a for a in self.d])

    def chain(self, f, df):
        return Dual(f, [df * a for a in self.d])

    # comparisons use the value only (branching of the closed forms)
    def __lt__(self, o):
        return self.v < (o.v if isinstance(o, Dual) else o)

    def __gt__(self, o):
        return self.v > (o.v if isinstance(o, Dual) else o)

    def __repr__(self):
        return f"Dual({self.v!r}, {self.d!r})"


def value(x):
    return x.v if isinstance(x, Dual) else float(x)


def exp(x):
    if not isinstance(x, Dual):
        return math.exp(x)
    e = math.exp(x.v)
    return x.chain(e, e)


def log(x):
    if not isinstance(x, Dual):
        return math.log(x)
    return x.chain(math.log(x.v), 1.0 / x.v)


def cos(x):
    if not isinstance(x, Dual):
        return math.cos(x)
    return x.chain(math.cos(x.v), -math.sin(x.v))


def sin(x):
    if not isinstance(x, Dual):
        return math.sin(x)
    return x.chain(math.sin(x.v), math.cos(x.v))


def sqrt(x):
    if not isinstance(x, Dual):
        return math.sqrt(x)
    r = math.sqrt(x.v)
    return x.chain(r, 0.5 / r)


def gauss_legendre(n):
    """Nodes and weights of n-point Gauss–Legendre quadrature on [0, 1] (Newton on P_n)."""
    nodes, weights = [], []
    for i in range(1, n + 1):
        x = math.cos(math.pi * (i - 0.25) / (n + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1)
            dx = p1 / dp
            x -= dx
            if abs(dx) < 1e-16:
                break
        nodes.append(0.5 * (1 - x))
        weights.append(1.0 / ((1 - x * x) * dp * dp))
    return nodes, weights
