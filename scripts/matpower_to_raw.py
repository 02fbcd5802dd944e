#!/usr/bin/env python3
"""Write a MATPOWER case (format version 2: baseMVA, bus, gen, branch) as a PSS/E RAW revision 33
file, the way data/grids/ieee39.raw and ieee118.raw were made.

  python3 scripts/matpower_to_raw.py CASE.m OUT.raw [--resolve] [--mbase-from-flow] [--zx X]
                                     [--zx-bus BUS=X ...] [--title TEXT] [--revision 32|33]

Revision 32 differs here only in the bus record (no voltage limits), the load record (no
INTRPT) and the last section (GNE devices; no induction machines).

* Buses, loads (one per bus with Pd or Qd), fixed shunts (Gs, Bs), generators, lines and
  transformers (a branch with a ratio other than 0 or 1, or a shift: tap and shift on the from
  side, CW = CZ = CM = 1, no magnetizing admittance; a transformer with line charging is refused,
  RAW cannot carry it; ratio 1 without shift is written as a line, which it is electrically).
* Without --resolve the bus voltages and generator outputs are copied as printed in the case
  (the file's own solution). With --resolve the AC power flow is solved again from the case's
  voltages (Newton, slack |V| and θ, PV |V| and P fixed, no Q limits) and the solution is written
  with 10 decimals (|V| pu, θ degrees, P/Q MW/Mvar): for cases whose stored voltages do not solve
  their own power flow.
* MBASE: the case's mBase, or with --mbase-from-flow max(100, 1.25 |S_g|) of the solved output
  rounded up to 10 MVA (a rating for per-unit dynamic data on the machine base).
* ZX (the machine impedance PSS/E's GENCLS takes as X'd, pu on MBASE): --zx for all, --zx-bus
  BUS=X for one generator bus.
"""
import argparse, cmath, math, re, sys

ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("out")
ap.add_argument("--resolve", action="store_true")
ap.add_argument("--mbase-from-flow", action="store_true")
ap.add_argument("--zx", type=float, default=1.0)
ap.add_argument("--zx-bus", action="append", default=[])
ap.add_argument("--title", default="")
ap.add_argument("--revision", type=int, choices=[32, 33], default=33)
args = ap.parse_args()

text = open(args.case).read()


def table(name):
    m = re.search(r"mpc\." + name + r"\s*=\s*\[(.*?)\];", text, re.S)
    if not m:
        sys.exit(f"{args.case}: mpc.{name} not found")
    rows = []
    for line in m.group(1).split("\n"):
        line = line.split("%")[0].strip().rstrip(";").strip()
        if line:
            rows.append(line.split())
    return rows


base = float(re.search(r"mpc\.baseMVA\s*=\s*([0-9.eE+-]+)", text).group(1))
bus, gen, branch = table("bus"), table("gen"), table("branch")
idx = {int(b[0]): k for k, b in enumerate(bus)}
n = len(bus)
vm = [float(b[7]) for b in bus]
va = [float(b[8]) for b in bus]
vm_text = [b[7] for b in bus]
va_text = [b[8] for b in bus]
pg_text = [g[1] for g in gen]
qg_text = [g[2] for g in gen]

if args.resolve:
    # Ybus
    Y = [dict() for _ in range(n)]

    def add(i, j, y):
        Y[i][j] = Y[i].get(j, 0) + y

    for r in branch:
        if float(r[10]) <= 0:
            continue
        i, j = idx[int(r[0])], idx[int(r[1])]
        ys = 1 / complex(float(r[2]), float(r[3]))
        b = float(r[4])
        tap = float(r[8]) or 1.0
        tau = cmath.rect(tap, float(r[9]) * math.pi / 180)
        add(i, i, (ys + 1j * b / 2) / abs(tau) ** 2)
        add(j, j, ys + 1j * b / 2)
        add(i, j, -ys / tau.conjugate())
        add(j, i, -ys / tau)
    for k, b in enumerate(bus):
        add(k, k, complex(float(b[4]), float(b[5])) / base)
    types = [int(b[1]) for b in bus]
    Psp = [-float(b[2]) / base for b in bus]
    Qsp = [-float(b[3]) / base for b in bus]
    for g in gen:
        if float(g[7]) > 0:
            Psp[idx[int(g[0])]] += float(g[1]) / base
    th = [math.radians(a) for a in va]
    V = list(vm)
    pvq = [k for k in range(n) if types[k] != 3]
    pq = [k for k in range(n) if types[k] == 1]

    def injections():
        Vc = [cmath.rect(V[k], th[k]) for k in range(n)]
        S = []
        for k in range(n):
            I = sum(y * Vc[j] for j, y in Y[k].items())
            S.append(Vc[k] * I.conjugate())
        return S

    def residual():
        S = injections()
        return [S[k].real - Psp[k] for k in pvq] + [S[k].imag - Qsp[k] for k in pq]

    for it in range(30):
        F = residual()
        norm = max(abs(x) for x in F)
        print(f"  Newton {it}: |mismatch| = {norm:.3e}")
        if norm < 1e-13:
            break
        # Jacobian by central differences of the mismatch (exact enough for Newton's convergence;
        # the converged solution is defined by the residual, not by the Jacobian).
        m = len(F)
        J = [[0.0] * m for _ in range(m)]
        cols = [("th", k) for k in pvq] + [("v", k) for k in pq]
        for c, (kind, k) in enumerate(cols):
            h = 1e-7
            arr = th if kind == "th" else V
            save = arr[k]
            arr[k] = save + h
            Fp = residual()
            arr[k] = save - h
            Fm = residual()
            arr[k] = save
            for r_ in range(m):
                J[r_][c] = (Fp[r_] - Fm[r_]) / (2 * h)
        # solve J dx = -F (Gaussian elimination with partial pivoting)
        A = [row[:] + [-F[r_]] for r_, row in enumerate(J)]
        for c in range(m):
            p = max(range(c, m), key=lambda r_: abs(A[r_][c]))
            A[c], A[p] = A[p], A[c]
            for r_ in range(c + 1, m):
                f = A[r_][c] / A[c][c]
                if f != 0:
                    Ar, Ac = A[r_], A[c]
                    for cc in range(c, m + 1):
                        Ar[cc] -= f * Ac[cc]
        dx = [0.0] * m
        for c in range(m - 1, -1, -1):
            dx[c] = (A[c][m] - sum(A[c][cc] * dx[cc] for cc in range(c + 1, m))) / A[c][c]
        for c, (kind, k) in enumerate(cols):
            if kind == "th":
                th[k] += dx[c]
            else:
                V[k] += dx[c]
    else:
        sys.exit("the power flow did not converge")
    S = injections()
    vm_text = [f"{V[k]:.10f}" for k in range(n)]
    va_text = [f"{math.degrees(th[k]):.10f}" for k in range(n)]
    # generator outputs: a bus's generation = injection + load, shared in proportion to the
    # case's Pg (slack P) and equally (Q) among the bus's in-service generators
    at = {}
    for gi, g in enumerate(gen):
        if float(g[7]) > 0:
            at.setdefault(idx[int(g[0])], []).append(gi)
    for k, gs in at.items():
        Pbus = (S[k].real + float(bus[k][2]) / base) * base
        Qbus = (S[k].imag + float(bus[k][3]) / base) * base
        for gi in gs:
            if types[k] == 3:
                pg_text[gi] = f"{Pbus / len(gs):.10f}"
            qg_text[gi] = f"{Qbus / len(gs):.10f}"

zx_bus = {int(s.split("=")[0]): float(s.split("=")[1]) for s in args.zx_bus}
out = []
out.append(f" 0, {base:.2f}, {args.revision}, 0, 1, 60.00     / {args.title or 'converted from ' + args.case}")
out.append(f"CONVERTED FROM {args.case.split('/')[-1]} BY scripts/matpower_to_raw.py")
out.append("POWER FLOW " + ("RE-SOLVED (NEWTON, NO Q LIMITS)" if args.resolve else "AS STORED IN THE CASE"))
for k, b in enumerate(bus):
    limits = ", 1.10000, 0.90000, 1.10000, 0.90000" if args.revision == 33 else ""
    out.append(f"{int(b[0]):6d},'BUS{int(b[0]):<9d}',{float(b[9]):9.4f},{int(b[1])},{int(float(b[6])):4d},{int(float(b[10])):4d},   1,{vm_text[k]},{va_text[k]}{limits}")
out.append("0 / END OF BUS DATA, BEGIN LOAD DATA")
for b in bus:
    if float(b[2]) != 0 or float(b[3]) != 0:
        out.append(f"{int(b[0]):6d},'1 ',1,{int(float(b[6])):4d},{int(float(b[10])):4d},{b[2]},{b[3]},     0.000,     0.000,     0.000,     0.000,   1,1" + (",0" if args.revision == 33 else ""))
out.append("0 / END OF LOAD DATA, BEGIN FIXED SHUNT DATA")
for b in bus:
    if float(b[4]) != 0 or float(b[5]) != 0:
        out.append(f"{int(b[0]):6d},'1 ',1,{b[4]},{b[5]}")
out.append("0 / END OF FIXED SHUNT DATA, BEGIN GENERATOR DATA")
count = {}
for gi, g in enumerate(gen):
    b = int(g[0])
    count[b] = count.get(b, 0) + 1
    mbase = float(g[6])
    if args.mbase_from_flow:
        s = math.hypot(float(pg_text[gi]), float(qg_text[gi]))
        mbase = max(100.0, math.ceil(1.25 * s / 10.0) * 10.0)
    zx = zx_bus.get(b, args.zx)
    out.append(f"{b:6d},'{count[b]} ',{pg_text[gi]},{qg_text[gi]},{g[3]},{g[4]},{g[5]},     0,{mbase:9.3f}, 0.00000E+0,{zx:.5E}, 0.00000E+0, 0.00000E+0,1.00000,{1 if float(g[7]) > 0 else 0},  100.0,{g[8]},{g[9]},   1,1.0000")
out.append("0 / END OF GENERATOR DATA, BEGIN BRANCH DATA")
circuits = {}
transformers = []
for r in branch:
    i, j = int(r[0]), int(r[1])
    key = (min(i, j), max(i, j))
    circuits[key] = circuits.get(key, 0) + 1
    ckt = circuits[key]
    st = 1 if float(r[10]) > 0 else 0
    # A ratio of 1 without shift is electrically a line (MATPOWER marks 86-87 and 68-116 of case118
    # as such transformers only for their different base voltages; 86-87 carries line charging).
    if float(r[9]) == 0 and float(r[8]) in (0.0, 1.0):
        out.append(f"{i:6d},{j:6d},'{ckt} ',{r[2]},{r[3]},{r[4]},{r[5]},{r[6]},{r[7]},  0.00000,  0.00000,  0.00000,  0.00000,{st},1,   0.00,   1,1.0000")
    else:
        if float(r[4]) != 0:
            sys.exit(f"branch {i}-{j}: a transformer with line charging b = {r[4]} cannot be written as a RAW transformer")
        tap = float(r[8]) or 1.0
        transformers.append(f"{i:6d},{j:6d},     0,'{ckt} ',1,1,1,0.0,0.0,2,'            ',{st},1,1.0000\n{r[2]},{r[3]},{base:.2f}\n{tap!r},0.0,{r[9]}\n1.0,0.0")
out.append("0 / END OF BRANCH DATA, BEGIN TRANSFORMER DATA")
out += transformers
out.append("0 / END OF TRANSFORMER DATA, BEGIN AREA DATA")
areas = sorted({int(float(b[6])) for b in bus})
for a in areas:
    out.append(f"{a:4d},    0,     0.000,    10.000,'AREA{a:<8d}'")
out.append("0 / END OF AREA DATA, BEGIN TWO-TERMINAL DC DATA")
for tail in ["TWO-TERMINAL DC DATA, BEGIN VOLTAGE SOURCE CONVERTER DATA", "VOLTAGE SOURCE CONVERTER DATA, BEGIN IMPEDANCE CORRECTION DATA",
             "IMPEDANCE CORRECTION DATA, BEGIN MULTI-TERMINAL DC DATA", "MULTI-TERMINAL DC DATA, BEGIN MULTI-SECTION LINE DATA",
             "MULTI-SECTION LINE DATA, BEGIN ZONE DATA", "ZONE DATA, BEGIN INTER-AREA TRANSFER DATA", "INTER-AREA TRANSFER DATA, BEGIN OWNER DATA",
             "OWNER DATA, BEGIN FACTS DEVICE DATA", "FACTS DEVICE DATA, BEGIN SWITCHED SHUNT DATA", "SWITCHED SHUNT DATA, BEGIN GNE DEVICE DATA",
             "GNE DEVICE DATA, BEGIN INDUCTION MACHINE DATA", "INDUCTION MACHINE DATA"]:
    if args.revision == 32 and "INDUCTION" in tail:  # revision 32 ends with the GNE section
        out.append("0 / END OF GNE DEVICE DATA")
        break
    out.append("0 / END OF " + tail)
out.append("Q")
open(args.out, "w").write("\n".join(out) + "\n")
print(f"wrote {args.out}: {n} buses, {len(gen)} generators, {len(branch) - len(transformers)} lines, {len(transformers)} transformers")
