"""Our side-by-side tables: per-run frames, summaries over seeds with the authors' aggregates, and the
authors' full table beside ours (the authors' numbers are in :mod:`companion.pandey2022.reference`)."""
from __future__ import annotations

import math

import pandas as pd
import torch

from .metrics import best_runs
from .reference import REFERENCE  # the authors' numbers (one copy)

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
