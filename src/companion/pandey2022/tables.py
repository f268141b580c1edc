"""The paper's reference numbers as data (with source tags) and our side-by-side tables.

Reference values are the authors' repository numbers collected in the reproduction reference note
(section 6); tags: [REPO-AAAI], [REPO-ECML], [REPO-EXPL] = the submission folder they come from.
Percentages of the *training* set unless stated; "acc" is most likely test accuracy [INFERRED].
"""
from __future__ import annotations

import math

import pandas as pd
import torch

from .metrics import best_runs


def _rows(block, keys, values, source):
    return [dict(zip(keys, v), source=source) for v in values]


_D1 = [("zeroth", 0, 98.16, 74.72, 10, 98.16, 74.72), ("zeroth", 0.0005, 95.60, 70.56, 9, 98.45, 74.02),
       ("zeroth", 0.001, 91.93, 66.31, 9, 98.14, 73.43), ("zeroth", 0.005, 92.48, 65.95, 9, 98.75, 73.03),
       ("zeroth", 0.01, 92.44, 69.83, 9, 98.63, 77.35), ("zeroth", 0.02, 56.07, 25.28, 3, 99.43, 78.67),
       ("first", 0, 99.64, 78.51, 10, 99.64, 78.51), ("first", 0.005, 99.67, 82.43, 10, 99.67, 82.43),
       ("second", 0, 99.68, 85.95, 10, 99.68, 85.95), ("second", 0.001, 97.71, 86.63, 10, 97.71, 86.63),
       ("second", 0.005, 99.85, 87.32, 10, 99.85, 87.32), ("second", 0.01, 99.92, 88.13, 10, 99.92, 88.13),
       ("second", 0.02, 99.93, 89.97, 10, 99.93, 89.97)]
_D2A = [("zeroth", 0, 99.99, 89.13, 10, 99.99, 89.13), ("zeroth", 0.001, 99.99, 89.15, 10, 99.99, 89.15),
        ("zeroth", 0.005, 99.99, 89.21, 10, 99.99, 89.21), ("zeroth", 0.01, 99.98, 89.10, 10, 99.98, 89.10),
        ("zeroth", 0.02, 99.99, 88.65, 10, 99.99, 88.65), ("zeroth", 0.04, 77.86, 60.19, 6, 99.98, 94.65),
        ("zeroth", 0.05, 89.35, 76.67, 8, 99.96, 93.03), ("first", 0, 100.0, 93.53, 10, 100.0, 93.53),
        ("first", 0.001, 99.99, 93.54, 10, 99.99, 93.54), ("first", 0.005, 99.99, 93.68, 10, 99.99, 93.68),
        ("first", 0.01, 99.99, 94.10, 10, 99.99, 94.10), ("first", 0.02, 100.0, 93.56, 10, 100.0, 93.56),
        ("first", 0.05, 83.65, 70.96, 7, 100.0, 100.0)]
_D2B = [("zeroth", 0, 99.89, 87.62, 10, 99.89, 87.62), ("zeroth", 0.001, 95.33, 80.06, 9, 99.84, 85.68),
        ("zeroth", 0.002, 89.46, 74.46, 8, 99.97, 89.375), ("first", 0, 99.74, 81.11, 10, 99.74, 81.11),
        ("first", 0.001, 99.73, 78.49, 10, 99.73, 78.49), ("first", 0.005, 93.59, 69.97, 9, 99.86, 77.65),
        ("first", 0.01, 82.75, 58.24, 7, 99.90, 80.22), ("first", 0.02, 65.34, 35.81, 4, 99.93, 80.25),
        ("second", 0, 99.89, 93.89, 10, 99.89, 93.89), ("second", 0.001, 99.52, 90.26, 10, 99.52, 90.26),
        ("second", 0.005, 88.05, 72.14, 8, 99.65, 88.44), ("second", 0.01, 81.26, 63.9, 7, 99.98, 91.09),
        ("second", 0.02, 69.12, 47.9, 5, 99.9, 94.14)]
_GRID_KEYS = ("layer", "k", "acc", "ftpt", "n_best", "best_acc", "best_ftpt")

_LAYER = [("d1", 0.001, "zeroth", 90.09, 9.85, 0.01, 0.04), ("d1", 0.001, "first", 91.38, 8.60, 0.02, 0.00),
          ("d1", 0.001, "second", 79.40, 20.49, 0.09, 0.02), ("d1", 0.01, "zeroth", 75.81, 21.96, 0.01, 2.21),
          ("d1", 0.01, "first", 90.54, 9.40, 0.05, 0.00), ("d1", 0.01, "second", 80.46, 19.45, 0.07, 0.00),
          ("d2", 0.01, "zeroth", 88.51, 11.42, 0.07, 0.00), ("d2", 0.01, "first", 93.39, 6.58, 0.02, 0.02),
          ("d2", 0.01, "second", 96.75, 3.23, 0.02, 0.00)]

_CPLX = [("zeroth", 50, 50, 99.99, 89.13), ("zeroth", 50, 100, 99.99, 86.13), ("zeroth", 50, 200, 99.99, 99.99),
         ("zeroth", 100, 50, 99.96, 92.17), ("zeroth", 100, 100, 99.99, 92.66), ("zeroth", 100, 200, 99.99, 93.59),
         ("zeroth", 200, 50, 99.98, 88.89), ("zeroth", 200, 100, 99.97, 94.64), ("zeroth", 200, 200, 99.98, 86.50),
         ("first", 50, 50, 99.99, 93.52), ("first", 50, 100, 99.99, 99.94), ("first", 50, 200, 99.99, 99.99),
         ("first", 100, 50, 99.96, 96.76), ("first", 100, 100, 99.99, 100.0), ("first", 100, 200, 99.99, 100.0),
         ("first", 200, 50, 99.99, 99.99), ("first", 200, 100, 99.97, 99.99), ("first", 200, 200, 99.98, 100.0)]

_CPLX_D1 = [(10, 20, 63.02, 27.12), (10, 50, 58.17, 29.51), (10, 100, 58.035, 31.53), (10, 200, 59.31, 30.77),
            (10, 300, 58.27, 33.28), (100, 10, 81.86, 12.64), (100, 20, 84.9, 14.9), (100, 50, 79.81, 20.08),
            (100, 100, 74.8, 25.06), (100, 200, 69.78, 30.06), (100, 300, 69.44, 30.39), (200, 10, 69.35, 16.635),
            (200, 20, 77.734, 17.9)]

_A1 = [("softmax", 99.86, 81.60, 1.221, 0.036, 0.101), ("sparsemax", 99.99, 99.36, 1.0914, 0.018, 0.0509),
       ("spherical", 98.44, 63.33, 2.747, 0.224, 0.686)]
_A2 = [("zeroth", "softmax", 98.89, 77.50, 2.407, 0.241, 0.677), ("zeroth", "sparsemax", 98.57, 76.95, 1.61, 0.740, 0.394),
       ("zeroth", "spherical", 96.16, 71.38, 3.294, 0.338, 1.0381), ("zeroth", "entropy", 98.815, 80.05, 2.547, 0.2266, 0.671),
       ("second", "softmax", 99.67, 86.83, 4.766, 0.422, 1.469), ("second", "sparsemax", 99.76, 87.14, 2.722, 0.370, 0.979),
       ("second", "spherical", 99.79, 89.06, 4.962, 0.392, 1.380), ("second", "entropy", 99.85, 87.87, 3.715, 0.325, 1.099)]
_INIT = [("zero", "softmax", 99.89, 84.41, 15.48, 10, 99.89, 84.41), ("zero", "sparsemax", 99.85, 76.86, 22.99, 10, 99.85, 76.86),
         ("not zero", "softmax", 93.7, 68.83, 24.87, 9, 99.86, 76.47), ("not zero", "sparsemax", 93.45, 84.21, 9.24, 9, 99.976, 93.48)]

#: table id -> DataFrame of the reference numbers.
REFERENCE = {
    "T-D1": pd.DataFrame(_rows("T-D1", _GRID_KEYS, _D1, "[REPO-AAAI]")),
    "T-D2a": pd.DataFrame(_rows("T-D2a", _GRID_KEYS, _D2A, "[REPO-AAAI]")),
    "T-D2b": pd.DataFrame(_rows("T-D2b", _GRID_KEYS, _D2B, "[REPO-AAAI]")),
    "T-LAYER": pd.DataFrame(_rows("T-LAYER", ("dataset", "lr", "layer", "ftpt", "ffpt", "ftpf", "ffpf"), _LAYER,
                                  "[REPO-EXPL 11_complexity/averaging_effects]")),
    "T-CPLX": pd.DataFrame(_rows("T-CPLX", ("layer", "focus_width", "cls_width", "acc", "ftpt"), _CPLX, "[REPO-AAAI]")),
    "T-CPLX-D1": pd.DataFrame(_rows("T-CPLX-D1", ("focus_width", "cls_width", "ftpt", "ffpt"), _CPLX_D1, "[REPO-EXPL]")),
    "T-A1": pd.DataFrame(_rows("T-A1", ("normaliser", "acc", "ftpt", "sparsity", "simplex_dist", "entropy_bits"), _A1,
                               "[REPO-AAAI]")),
    "T-A2": pd.DataFrame(_rows("T-A2", ("layer", "normaliser", "acc", "ftpt", "sparsity", "simplex_dist", "entropy_bits"),
                               _A2, "[REPO-AAAI]")),
    "T-INIT": pd.DataFrame(_rows("T-INIT", ("focus_init", "normaliser", "acc", "ftpt", "ffpt", "n_best", "best_acc",
                                            "best_ftpt"), _INIT, "[REPO-AAAI] (older Table A1)")),
}

LAYER_NAMES = {0: "zeroth", 1: "first", 2: "second"}


def reference(table: str) -> pd.DataFrame:
    return REFERENCE[table].copy()


def member_frame(result: dict, split: str = "train", **extra) -> pd.DataFrame:
    """One row per trained member: its settings and final metrics (%), plus constant ``extra`` columns."""
    m = result["members"]
    cfg = result["config"]
    final = result["final"][split]
    rows = []
    for e in range(len(m["seed"])):
        row = {"seed": m["seed"][e], "k": m["k"][e], "lr": m["lr"][e],
               "focus_width": m["focus_hidden"][e][-1] if m["focus_hidden"][e] else 0,
               "cls_width": m["cls_hidden"][e][0] if m["cls_hidden"][e] else 0,
               "layer": LAYER_NAMES[cfg["layer"]], "normaliser": cfg["normaliser"],
               "stop_epoch": int(result["stop_epoch"][e])}
        for key, v in final.items():
            row[key] = float(v[e])
        row["test_acc"] = float(result["final"]["test"]["acc"][e])
        row["test_ftpt"] = float(result["final"]["test"]["ftpt"][e])
        row.update(extra)
        rows.append(row)
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame, by: list[str], acc: str = "test_acc",
              values=("ftpt", "ffpt", "ftpf", "ffpf")) -> pd.DataFrame:
    """Mean, sd over seeds and the paper's best-run aggregates (accuracy > 90 %) per group."""
    out = []
    for key, g in frame.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["runs"] = len(g)
        for col in (acc, *values):
            if col in g:
                row[col] = g[col].mean()
                row[f"{col}_sd"] = g[col].std(ddof=1) if len(g) > 1 else 0.0
        br = best_runs(torch.tensor(g[acc].values), {"acc": torch.tensor(g[acc].values),
                                                    "ftpt": torch.tensor(g["ftpt"].values)})
        row["n_best"], row["best_acc"], row["best_ftpt"] = br["n_best"], br["best_acc"], br["best_ftpt"]
        out.append(row)
    return pd.DataFrame(out)


def fmt_pm(mean, sd, digits=1):
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def side_by_side(ours: pd.DataFrame, ref: pd.DataFrame | None, keys: list[str], cols: list[str],
                 acc: str = "test_acc") -> pd.DataFrame:
    """Paper and ours per setting: ``paper <col>`` beside ``ours <col>`` (mean ± sd over seeds)
    and the difference ours - paper. Settings without a reference value show '-'."""
    ref = pd.DataFrame(columns=keys) if ref is None else ref.copy()
    for kcol in keys:
        if kcol in ("k", "lr"):
            ref[kcol] = ref[kcol].astype(float)
            ours = ours.assign(**{kcol: ours[kcol].astype(float)})
    ref = ref[[c for c in ref.columns if c in keys or c in cols]]
    ref = ref.rename(columns={c: f"{c}_paper" for c in cols})
    merged = ours.merge(ref, on=keys, how="left")
    rows = []
    for _, r in merged.iterrows():
        row = {k: r[k] for k in keys}
        row["runs"] = int(r["runs"])
        for c in cols:
            ours_col = acc if c == "acc" else c
            pv = r.get(f"{c}_paper", float("nan"))
            ov, sd = r.get(ours_col, float("nan")), r.get(f"{ours_col}_sd", 0.0)
            if c == "n_best":
                row[f"paper {c}"] = "-" if pd.isna(pv) else f"{int(pv)}"
                row[f"ours {c}"] = f"{int(ov)}/{int(r['runs'])}"
                continue
            row[f"paper {c}"] = "-" if pd.isna(pv) else f"{pv:.2f}"
            # best-run aggregates are means over a subset: no sd is shown for them
            row[f"ours {c}"] = fmt_pm(ov, sd) if not (pd.isna(sd) or c.startswith("best_")) else (
                "-" if pd.isna(ov) else f"{ov:.1f}")
            row[f"Δ {c}"] = "-" if pd.isna(pv) or pd.isna(ov) else f"{ov - pv:+.1f}"
        rows.append(row)
    return pd.DataFrame(rows)


def tolerance(sd: float, n: int, floor: float = 5.0) -> float:
    """Tolerance for comparing an ensemble mean with a reference value: two standard errors of our
    mean (seed-to-seed spread is large on these tasks) plus a floor of ``floor`` percentage points."""
    se = (sd / math.sqrt(n)) if n > 1 and not math.isnan(sd) else 0.0
    return floor + 2.0 * se
