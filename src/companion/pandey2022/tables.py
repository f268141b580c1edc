"""Our side-by-side tables: per-run frames, summaries over seeds with the authors' aggregates, and the
authors' full table beside ours (the authors' numbers are in :mod:`companion.pandey2022.reference`)."""
from __future__ import annotations

import math

import pandas as pd
import torch

from .. import stats
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


def summarise(frame: pd.DataFrame, by: list[str], acc: str = "acc",
              values=("ftpt", "ffpt", "ftpf", "ffpf")) -> pd.DataFrame:
    """Mean and sd over seeds per group, and the authors' best-run aggregates.

    As the authors computed them: ``acc`` is the *training* accuracy (FTPT + FFPT, their "avg Acc"),
    a best run is a run whose training accuracy exceeds 90 %, and "best" means average over those
    runs. The test accuracy is summarised beside it (``test_acc``)."""
    out = []
    for key, g in frame.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["runs"] = len(g)
        for col in dict.fromkeys((acc, "test_acc", *values)):
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


NOT_RUN = "not run under this profile"
LABELS = {"acc": "train acc", "n_best": "best runs", "best_ftpt": "best-run FTPT", "best_acc": "best-run acc"}


def _key_types(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    frame = frame.copy()
    for kcol in keys:
        if kcol in ("k", "lr"):
            frame[kcol] = frame[kcol].astype(float).round(8)
        elif kcol in ("focus_width", "cls_width"):
            frame[kcol] = frame[kcol].astype(int)
    return frame


def side_by_side(ours: pd.DataFrame, ref: pd.DataFrame | None, keys: list[str], cols: list[str],
                 acc: str = "acc") -> pd.DataFrame:
    """The authors' full table row for row, with ours beside it.

    Per column: ``paper <col>``, ``ours <col>`` (mean ± sd over our seeds) and the difference. Rows of
    the authors' table we did not run say so; rows we ran that the authors did not report come last.
    With best-run counts, ``ours failed`` gives the share of our runs whose training accuracy stayed
    at or below 90 % with its 95 % Wilson interval, beside the authors' count."""
    ref = pd.DataFrame(columns=keys) if ref is None else _key_types(ref, keys)
    ours = _key_types(ours, keys)
    mine = {tuple(r[keys]): r for _, r in ours.iterrows()}
    theirs = {tuple(r[keys]): r for _, r in ref.iterrows()}
    rows = []
    for key in [*theirs, *(k for k in mine if k not in theirs)]:
        p, o = theirs.get(key), mine.get(key)
        row = dict(zip(keys, key))
        row["paper runs"] = "-" if p is None or pd.isna(p.get("n", float("nan"))) else int(p["n"])
        row["ours runs"] = NOT_RUN if o is None else int(o["runs"])
        for c in cols:
            label = LABELS.get(c, c)
            pv = float("nan") if p is None else p.get(c, float("nan"))
            ours_col = acc if c == "acc" else c
            ov = float("nan") if o is None else o.get(ours_col, float("nan"))
            sd = float("nan") if o is None else o.get(f"{ours_col}_sd", float("nan"))
            if c == "n_best":
                row[f"paper {label}"] = "-" if pd.isna(pv) else f"{int(pv)}"
                row[f"ours {label}"] = "-" if o is None else f"{int(ov)}/{int(o['runs'])}"
                if o is not None:
                    fails = stats.rate_interval(int(o["runs"]) - int(ov), int(o["runs"]))
                    row["ours failed (95% Wilson)"] = f"{fails.estimate:.0%} [{fails.lo:.0%}, {fails.hi:.0%}]"
                else:
                    row["ours failed (95% Wilson)"] = "-"
                continue
            row[f"paper {label}"] = "-" if pd.isna(pv) else f"{pv:.2f}"
            # best-run aggregates are means over a subset: no sd is shown for them
            row[f"ours {label}"] = "-" if pd.isna(ov) else (
                f"{ov:.1f}" if pd.isna(sd) or c.startswith("best_") else fmt_pm(ov, sd))
            row[f"Δ {label}"] = "-" if pd.isna(pv) or pd.isna(ov) else f"{ov - pv:+.1f}"
        if o is not None and "test_acc" in o:
            row["ours test acc"] = fmt_pm(o["test_acc"], o.get("test_acc_sd", 0.0))
        elif "test_acc" in ours:
            row["ours test acc"] = "-"
        rows.append(row)
    return pd.DataFrame(rows)
