"""Shared by the hybridsens-grid tests: relative differences and the central-difference check of
an adjoint gradient against the command's own objectives."""


def row_rel(a, b):
    """max |a − b| relative to max |a| (a row of numbers)."""
    scale = max(max(abs(x) for x in a), 1e-300)
    return max(abs(x - y) for x, y in zip(a, b)) / scale


def central_difference(run, opts, files, name, base, k, h):
    """(J_k(p + h) − J_k(p − h)) / 2h with parameter `name` set by its option; run(opts, files) gives the summary."""
    plus = run(opts + [f"-{name}", repr(base + h)], files)["objective"][k]
    minus = run(opts + [f"-{name}", repr(base - h)], files)["objective"][k]
    return (plus - minus) / (2 * h)


def check_central_differences(run, check, label, opts, files, s, costs, params, tol=1e-6, step=1e-6):
    """For each cost, the adjoint gradient of summary s against central differences over params (steps
    step·max(1, |p|)), relative to the largest of those entries; check(ok, message) records the result."""
    names, cn = s["parameter_names"], s["costs"]
    for c in costs:
        k = cn.index(c)
        grad = s["gradient"]["p"][k]
        scale = max(abs(grad[names.index(p)]) for p in params)
        worst, where = 0.0, ""
        for p in params:
            j = names.index(p)
            base = s["parameters"][j]
            g = central_difference(run, opts, files, p, base, k, step * max(1.0, abs(base)))
            err = abs(g - grad[j]) / max(scale, 1e-300)
            if err > worst:
                worst, where = err, p
        check(worst <= tol, f"{label}: d{c}/d({', '.join(params)}): adjoint vs central differences {worst:.1e} <= {tol:g} (worst {where})")
