#!/usr/bin/env python3
"""Plots of examples/hysteresis_oscillator ([SerbanRecuero2019] §5.2, Figs. 6-8) into one PNG:

  (a) the hysteresis loops z(u) with the load reversals (Fig. 6);
  (b) the adjoint λ_u of G = ∫u² dt for t in [6, 8], with its jump at every reversal, and the
      continuous velocity adjoint λ_v (Fig. 8; PETSc's sign convention λ = ∂G/∂u(t));
  (c) the relative sensitivities p_j ∂u/∂p_j for t in [0, 4] (Fig. 7; β is exactly zero);
  (d) the same for the stress, p_j ∂z/∂p_j.

Usage (matplotlib; Debian's python3-matplotlib):
  scripts/plot_hysteresis.py --build build --out hysteresis.png      # runs the example itself
  scripts/plot_hysteresis.py --traj traj.csv --adjoint adj.csv --summary s.json --out hysteresis.png
where the files come from
  build/examples/hysteresis_oscillator -hs_forward -hs_adjoint -trajectory_csv traj.csv -adjoint_csv adj.csv -hs_summary s.json
(the summary gives the parameter values that scale (c) and (d); without it the defaults are used).
Extra arguments after "--" go to the example (e.g. -- -ts_type cn -ts_dt 2e-4).
"""
import argparse, csv, json, math, os, subprocess, sys, tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return rows


def column(rows, key):
    return [float(r[key]) for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", help="build directory (runs build/examples/hysteresis_oscillator)")
    ap.add_argument("--traj", help="trajectory CSV (-trajectory_csv)")
    ap.add_argument("--adjoint", help="adjoint CSV (-adjoint_csv)")
    ap.add_argument("--summary", help="JSON summary of the same run (-hs_summary), for the parameter values")
    ap.add_argument("--out", default="hysteresis.png")
    ap.add_argument("extra", nargs="*", help="options for the example (after --)")
    a = ap.parse_args()
    tmp = None
    if a.build:
        tmp = tempfile.TemporaryDirectory()
        a.traj, a.adjoint, a.summary = (os.path.join(tmp.name, f) for f in ("traj.csv", "adj.csv", "s.json"))
        exe = os.path.join(a.build, "examples", "hysteresis_oscillator")
        subprocess.run([exe, "-hs_forward", "-hs_adjoint", "-trajectory_csv", a.traj, "-adjoint_csv", a.adjoint,
                        "-hs_summary", a.summary] + a.extra, check=True, stdout=subprocess.DEVNULL)
    if not (a.traj and a.adjoint):
        ap.error("give --build, or both --traj and --adjoint")
    traj, adj = read_csv(a.traj), read_csv(a.adjoint)
    if "du_dka" not in traj[0]:
        sys.exit("the trajectory CSV has no sensitivities: run the example with -hs_forward")

    t, u, z = column(traj, "t"), column(traj, "u"), column(traj, "z")
    # Reversals: where the loading direction ξ changes between consecutive rows.
    rev = [i for i in range(1, len(traj)) if traj[i]["xi"] != traj[i - 1]["xi"]]

    fig, ax = plt.subplots(2, 2, figsize=(12, 8.5))
    ax[0, 0].plot(u, z, lw=0.8)
    ax[0, 0].plot([u[i] for i in rev], [z[i] for i in rev], "o", ms=3, color="C3", label="load reversals")
    ax[0, 0].set(xlabel="displacement u", ylabel="stress z", title="(a) hysteresis loops (cf. Serban & Recuero 2019, Fig. 6)")
    ax[0, 0].legend(loc="upper left")

    # Adjoint samples come in reverse time; at a reversal the "step" row is λ⁺ and the
    # "after_reversal" row at the same time is λ⁻.
    window = [r for r in adj if 6.0 <= float(r["t"]) <= 8.0]
    window.reverse()
    ta, lu, lv = column(window, "t"), column(window, "lambda_u"), column(window, "lambda_v")
    ax[0, 1].plot(ta, lu, lw=1.0, label="λ_u (displacement)")
    ax[0, 1].plot(ta, lv, lw=1.0, label="λ_v (velocity)")
    jumps = [(float(r["t"]), float(r["lambda_u"])) for r in window if r["kind"] == "after_reversal"]
    for k, r in enumerate(window):
        if r["kind"] == "after_reversal" and k + 1 < len(window):
            ax[0, 1].plot([float(r["t"])] * 2, [float(r["lambda_u"]), float(window[k + 1]["lambda_u"])], ":", color="C3")
    ax[0, 1].plot([j[0] for j in jumps], [j[1] for j in jumps], "o", ms=3, color="C3", label="λ_u⁻ at reversals")
    ax[0, 1].set(xlabel="t", ylabel="adjoint of G", title="(b) adjoint: λ_u jumps at reversals (cf. Serban & Recuero 2019, Fig. 8)")
    ax[0, 1].legend(loc="best")

    pv = json.load(open(a.summary))["parameters"] if a.summary else [32 * math.pi ** 2, math.pi ** 2, 205.0, 0.0]
    params = [("ka", pv[0], "k_a"), ("kb", pv[1], "k_b"), ("alpha", pv[2], "α")]
    early = [i for i, x in enumerate(t) if x <= 4.0]
    for key, p, label in params:
        ax[1, 0].plot([t[i] for i in early], [p * float(traj[i]["du_d" + key]) for i in early], lw=0.9, label=f"{label} ∂u/∂{label}")
        ax[1, 1].plot([t[i] for i in early], [p * float(traj[i]["dz_d" + key]) for i in early], lw=0.9, label=f"{label} ∂z/∂{label}")
    ax[1, 0].set(xlabel="t", ylabel="p_j ∂u/∂p_j", title="(c) displacement sensitivities (cf. Serban & Recuero 2019, Fig. 7)")
    ax[1, 1].set(xlabel="t", ylabel="p_j ∂z/∂p_j", title="(d) stress sensitivities")
    for a_ in (ax[1, 0], ax[1, 1]):
        a_.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}: {len(rev)} reversals, {len(jumps)} adjoint jumps in [6, 8]")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
