"""The synthetic studies behind the table chapters (T-D1, T-D2a/b, T-LAYER, T-CPLX, T-A1/A2, focus
initialisation, F-TREND, F-ALPHA): which runs, how they are batched, and their tables.

A *program* is one cached batched training run: one dataset, architecture, averaging layer,
normaliser and entropy weight k, with the seeds (and optionally learning rates or widths) stacked on
the ensemble axis. Programs are keyed by their full configuration, so two chapters asking for the same
(layer, k, seeds, epochs, dtype) share one trained ensemble (e.g. T-D1, T-A2 and F-TREND).

Protocol (the authors' AAAI code): Adam lr 0.001 for both nets, batch 250, early stop when the epoch's
loss read from its minibatches is <= 0.01 (checked every epoch, see :mod:`.train`), FTPT etc. and the
accuracy ("avg Acc" = FTPT + FFPT) on the training set at the end, the test accuracy beside it; curves
every ``EVAL_EVERY`` epochs. Under the ``quick`` profile the chapters cap the epochs and the seeds.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from .. import registry, stats
from . import data as data_mod
from . import metrics as met
from . import train as T
from .specs import program_spec
from .tables import LAYER_NAMES, member_frame, reference, side_by_side, summarise

LAYER_IDS = {v: k for k, v in LAYER_NAMES.items()}
EVAL_EVERY = 10
#: where each table's reference k grid lives, per layer
_K_GRIDS = {"T-D1": "T-D1", "T-D2a": "T-D2a", "T-D2b": "T-D2b"}


def parse_list(text, cast=float) -> list:
    """'a,b,c' -> [cast(a), cast(b), cast(c)]; raises ValueError with a one-line message."""
    items = (list(text) if isinstance(text, (list, tuple))
             else [t.strip() for t in str(text).split(",") if t.strip()])
    try:
        out = [cast(t) for t in items]
    except ValueError:
        raise ValueError(f"cannot read {text!r} as a comma-separated list of {cast.__name__}") from None
    if not out:
        raise ValueError(f"empty list: {text!r}")
    return out


def parse_layers(text) -> list[str]:
    layers = parse_list(text, str)
    bad = [v for v in layers if v not in LAYER_IDS]
    if bad:
        raise ValueError(f"unknown averaging layer(s) {bad}; use a comma list of {list(LAYER_IDS)}")
    return layers


def program_config(dataset: str, arch_name: str, *, layer, seeds, epochs: int, dtype: str = "float32",
                   k: float = 0.0, normaliser: str = "softmax", focus_zero=None, lrs=(0.001,), widths=None,
                   stop_loss=0.01, stop_on="minibatch") -> dict:
    """The configuration (= cache key) of one batched program; ``layer`` may be a name ('zeroth') or an
    index. ``stop_on``: which loss the early stop reads (see :mod:`.train`)."""
    layer = LAYER_IDS.get(layer, layer)
    return T.ensemble_config(dataset, arch_name, layer=int(layer), normaliser=normaliser, seeds=seeds,
                             ks=(k,), lrs=lrs, widths=widths, focus_zero=focus_zero, epochs=epochs,
                             stop_loss=stop_loss, eval_every=min(EVAL_EVERY, epochs), dtype=dtype,
                             stop_on=stop_on)


def program(dataset: str, arch_name: str, **kwargs) -> dict:
    """Train (or load) one batched program (arguments as :func:`program_config`)."""
    return program_spec(program_config(dataset, arch_name, **kwargs)).fetch()


def k_values(table: str, layer: str, ks: str) -> list[float]:
    """The entropy weights to run at ``layer``: 'paper' = the authors' grid of that table and layer; a
    comma list runs each k the authors ran at *some* layer only at the layers where they ran it (so
    "0,0.02" fills the table's rows without adding cells it does not have), and any other k at every layer."""
    ref = reference(_K_GRIDS[table])
    here = sorted(ref[ref["layer"] == layer]["k"].astype(float).unique().tolist())
    if str(ks).strip() == "paper":
        return here
    anywhere = set(ref["k"].astype(float))
    return [k for k in parse_list(ks) if k in here or k not in anywhere]


def layer_k_configs(table: str, dataset: str, arch_name: str, layers: str, ks: str, n_seeds: int,
                    epochs: int, dtype: str, normaliser: str = "softmax") -> list[dict]:
    """The configurations of a table's (layer, k) programs, in table order (:func:`layer_k_grid` trains
    them; the chapters' declarations list them)."""
    return [program_config(dataset, arch_name, layer=layer, seeds=range(n_seeds), epochs=epochs, dtype=dtype,
                           k=k, normaliser=normaliser)
            for layer in parse_layers(layers) for k in k_values(table, layer, ks)]


def layer_k_grid(table: str, dataset: str, arch_name: str, layers: str, ks: str, n_seeds: int,
                 epochs: int, dtype: str, normaliser: str = "softmax"):
    """All (layer, k) programs of a table; returns (per-run frame, summary, paper-vs-ours table)."""
    frames = []
    for cfg in layer_k_configs(table, dataset, arch_name, layers, ks, n_seeds, epochs, dtype, normaliser):
        frames.append(member_frame(program_spec(cfg).fetch()))
    runs = pd.concat(frames, ignore_index=True)
    summ = summarise(runs, ["layer", "k"])
    cmp = side_by_side(summ, reference(table), ["layer", "k"], ["acc", "ftpt", "n_best", "best_ftpt"])
    return runs, summ, cmp


def _traced(res: dict, split: str):
    """The trained runs' forward trace on one split, with its labels and foreground positions."""
    d = data_mod.load(res["config"]["dataset"], res["config"]["data_seed"] or 0)
    ens = T.ensemble_of(res)
    x = (d.x_train if split == "train" else d.x_test).to(ens.dtype)
    y = d.y_train if split == "train" else d.y_test
    fore = d.fore_train if split == "train" else d.fore_test
    with torch.no_grad():
        tr = ens(x, res["config"]["normaliser"])
    return tr, y, fore


def max_alpha_split(res: dict, split: str = "train") -> dict:
    """Largest attention weight of every mosaic of every run, split into FTPT and FFPT points."""
    tr, y, fore = _traced(res, split)
    return met.max_alpha_split(tr.alpha, tr.logits, y, fore)


def max_alpha_by_run(res: dict, split: str = "train") -> pd.DataFrame:
    """Per run: mean largest attention weight over its FTPT and over its FFPT mosaics (NaN if none)."""
    tr, y, fore = _traced(res, split)
    rows = []
    for e, seed in enumerate(res["members"]["seed"]):
        parts = met.max_alpha_split(tr.alpha[e], tr.logits[e], y, fore)
        rows.append({"seed": seed, **{f"{k}_points": int(v.numel()) for k, v in parts.items()},
                     **{f"{k}_max_alpha": float(v.double().mean()) if v.numel() else float("nan")
                        for k, v in parts.items()}})
    return pd.DataFrame(rows)


def curves_frame(res: dict, split: str = "train") -> pd.DataFrame:
    """Per-run, per-epoch categories in long format (for trend plots and tables)."""
    rows = []
    ep = res["epochs"].tolist()
    cur = res["curves"][split]
    for e, seed in enumerate(res["members"]["seed"]):
        for t, epoch in enumerate(ep):
            rows.append({"seed": seed, "epoch": epoch, **{c: float(cur[c][e, t]) for c in met.CATEGORIES},
                         "acc": float(cur["acc"][e, t])})
    return pd.DataFrame(rows)


def _method_config(dataset, arch_name, layer, method, n_seeds, epochs, dtype, k_entropy=0.0, focus_zero=None,
                   lr=0.001, stop_on="minibatch") -> dict:
    """'softmax' | 'sparsemax' | 'spherical' | 'entropy' (softmax with the entropy regulariser)."""
    norm = "softmax" if method == "entropy" else method
    k = k_entropy if method == "entropy" else 0.0
    return program_config(dataset, arch_name, layer=layer, seeds=range(n_seeds), epochs=epochs, dtype=dtype,
                          k=k, normaliser=norm, focus_zero=focus_zero, lrs=(lr,), stop_on=stop_on)


#: The appendix sparsity tables as the authors ran them (their notebooks and scripts in
#: attention_sparsity_comparison/codes_initial_comparison, not the readme): a Xavier-normal focus without the
#: functionally-zero step, seeded once per run, at most 2500 epochs, early stop when the loss of a full
#: pass over the training set after the epoch is <= 0.01 (``stop_on="full"``; the Table A1 notebooks
#: divided the sum of the 12 batch losses by 11, we take the mean). Table A1 used Adam lr 0.01 for softmax
#: and sparsemax but 0.001 for spherical softmax; Table A2 lr 0.001.
#: "T-A1-older" is the earlier version of Table A1 (functionally-zero focus, lr 0.001), kept for comparison.
SPARSITY_SETUPS = {
    "T-A1": {"dataset": "d2", "arch": "A_2_2-random-focus", "stop_on": "full",
             "lr": {"softmax": 0.01, "sparsemax": 0.01, "spherical": 0.001}},
    "T-A1-older": {"dataset": "d2", "arch": "A_2_2", "stop_on": "minibatch", "lr": {}},
    "T-A2": {"dataset": "d1", "arch": "A_1-random-focus", "stop_on": "full", "lr": {}},
}


def trained_runs(frame: pd.DataFrame, threshold: float = 90.0) -> pd.DataFrame:
    """The authors' "best runs": runs whose training accuracy (FTPT + FFPT) exceeds ``threshold`` %."""
    return frame[frame["acc"] > threshold]


def sparsity_configs(dataset: str, arch_name: str, layers: str, methods: str, n_seeds: int, epochs: int,
                     dtype: str, k_by_layer: dict | None = None, lr_by_method: dict | None = None,
                     stop_on: str = "minibatch") -> list[tuple[str, str, dict]]:
    """The programs of :func:`sparsity_table` (same arguments but the table), in its order: (layer, method,
    configuration). The chapters' declarations train them as tasks from this same list."""
    out = []
    for layer in parse_layers(layers):
        for method in parse_list(methods, str):
            k = (k_by_layer or {}).get(layer, 0.005)
            lr = (lr_by_method or {}).get(method, 0.001)
            cfg = _method_config(dataset, arch_name, layer, method, n_seeds, epochs, dtype, k_entropy=k,
                                 lr=lr, stop_on=stop_on)
            out.append((layer, method, cfg))
    return out


def sparsity_table(table: str, dataset: str, arch_name: str, layers: str, methods: str, n_seeds: int,
                   epochs: int, dtype: str, k_by_layer: dict | None = None, lr_by_method: dict | None = None,
                   stop_on: str = "minibatch"):
    """T-A1 / T-A2: normalisers (and the entropy regulariser) side by side, with sparsity diagnostics.
    ``lr_by_method``: Adam learning rate per method (default 0.001)."""
    frames = []
    for _, method, cfg in sparsity_configs(dataset, arch_name, layers, methods, n_seeds, epochs, dtype,
                                           k_by_layer, lr_by_method, stop_on):
        f = member_frame(program_spec(cfg).fetch())
        f["method"] = method
        frames.append(f)
    runs = pd.concat(frames, ignore_index=True)
    keys = ["layer", "method"] if table == "T-A2" else ["method"]
    # the authors' "avg Acc" and "best runs" use the training accuracy (FTPT + FFPT); test accuracy beside it
    summ = summarise(runs, keys, acc="acc",
                     values=("test_acc", "ftpt", "ffpt", "sparsity", "simplex_dist", "entropy_bits"))
    ref = reference(table).rename(columns={"normaliser": "method"})
    if "aggregate" in ref:  # T-A1 gives spherical softmax over all runs and over the trained runs
        ref = ref[ref["aggregate"] == "all runs"]
    cols = ["acc", "test_acc", "ftpt", "sparsity", "simplex_dist", "entropy_bits"]
    cmp = side_by_side(summ, ref, keys, cols, acc="acc")
    return runs, summ, cmp


def init_configs(n_seeds: int, epochs: int, dtype: str) -> list[tuple[bool, str, dict]]:
    """(functionally zero focus?, method, configuration) of every program of :func:`init_table`."""
    return [(zero, method, _method_config("d2", "A_2_2", "zeroth", method, n_seeds, epochs, dtype,
                                          focus_zero=zero))
            for zero in (True, False) for method in ("softmax", "sparsemax")]


def init_table(n_seeds: int, epochs: int, dtype: str):
    """Focus initialisation (functionally zero vs not zero) x (softmax, sparsemax) on D2, A_2_2, zeroth."""
    frames = []
    for zero, method, cfg in init_configs(n_seeds, epochs, dtype):
        f = member_frame(program_spec(cfg).fetch())
        f["focus_init"] = "zero" if zero else "not zero"
        f["method"] = method
        frames.append(f)
    runs = pd.concat(frames, ignore_index=True)
    summ = summarise(runs, ["focus_init", "method"])
    ref = reference("T-INIT").rename(columns={"normaliser": "method"})
    cmp = side_by_side(summ, ref, ["focus_init", "method"], ["acc", "ftpt", "ffpt", "n_best", "best_ftpt"])
    return runs, summ, cmp


def layer_lr_configs(layers: str, lrs: str, n_seeds: int, epochs: int, dtype: str, with_d2: bool,
                     d2_layers: str | None = None) -> list[tuple[str, dict]]:
    """(dataset, configuration) of every program of :func:`layer_lr_table` (same arguments)."""
    blocks = [("d1", "D1-ecml", parse_list(lrs), layers)]
    if with_d2:
        blocks.append(("d2", "D2-ecml", [0.01], d2_layers or layers))
    return [(dataset, program_config(dataset, arch_name, layer=layer, seeds=range(n_seeds), epochs=epochs,
                                     dtype=dtype, lrs=lr_list))
            for dataset, arch_name, lr_list, block_layers in blocks for layer in parse_layers(block_layers)]


def layer_lr_table(layers: str, lrs: str, n_seeds: int, epochs: int, dtype: str, with_d2: bool,
                   d2_layers: str | None = None):
    """T-LAYER: the earlier (ECML) nets with biases and default init; learning rates batched as members.
    The D2 rows (lr 0.01) run at ``d2_layers`` (default: the same layers as D1)."""
    frames = []
    for dataset, cfg in layer_lr_configs(layers, lrs, n_seeds, epochs, dtype, with_d2, d2_layers):
        f = member_frame(program_spec(cfg).fetch())
        f["dataset"] = dataset
        frames.append(f)
    runs = pd.concat(frames, ignore_index=True)
    summ = summarise(runs, ["dataset", "lr", "layer"])
    cmp = side_by_side(summ, reference("T-LAYER"), ["dataset", "lr", "layer"],
                       ["acc", "ftpt", "ffpt", "ftpf", "ffpf"])
    return runs, summ, cmp


def width_cells(table: str, focus_widths: str, cls_widths: str, cells: str = "all") -> list[tuple[int, int]]:
    """The (focus width, classifier width) cells to run: the cross product of the two lists, or with
    ``cells="authors"`` only those of its cells that the authors' table reports."""
    grid = [(f, c) for f in parse_list(focus_widths, int) for c in parse_list(cls_widths, int)]
    if cells == "all":
        return grid
    if cells != "authors":
        raise ValueError(f"cells must be 'authors' or 'all', not {cells!r}")
    ref = reference(table)
    reported = set(zip(ref["focus_width"].astype(int), ref["cls_width"].astype(int)))
    kept = [fc for fc in grid if fc in reported]
    if not kept:
        raise ValueError(f"none of the width cells {grid} is in the authors' {table}; "
                         "run them with cells = 'all'")
    return kept


def width_programs(table: str, dataset: str, arch_name: str, layers: str, focus_widths: str, cls_widths: str,
                   n_seeds: int, epochs: int, dtype: str, cells: str = "all") -> list[dict]:
    """The programs of a width table, as keyword arguments of :func:`program`: one per averaging layer
    and focus width, holding that focus width's classifier widths (zero-padded to the widest) x seeds.
    The focus net runs on all nine segments, so it sets the cost; padding every member to the widest
    focus net as well made a focus-10 run cost as much as a focus-200 one (T-CPLX-D1: 1.7 times as long)."""
    grid = width_cells(table, focus_widths, cls_widths, cells)
    focus = list(dict.fromkeys(f for f, _ in grid))
    return [dict(dataset=dataset, arch_name=arch_name, layer=layer, seeds=range(n_seeds), epochs=epochs,
                 dtype=dtype, widths=[((f,), (c,)) for g, c in grid if g == f])
            for layer in parse_layers(layers) for f in focus]


def width_table(table: str, dataset: str, arch_name: str, layers: str, focus_widths: str, cls_widths: str,
                n_seeds: int, epochs: int, dtype: str, cells: str = "all"):
    """T-CPLX / T-CPLX-D1: focus width x classifier width (the programs of :func:`width_programs`)."""
    progs = width_programs(table, dataset, arch_name, layers, focus_widths, cls_widths, n_seeds, epochs,
                           dtype, cells)
    runs = pd.concat([member_frame(program_spec(program_config(**kw)).fetch()) for kw in progs],
                     ignore_index=True)
    keys = ["layer", "focus_width", "cls_width"] if table == "T-CPLX" else ["focus_width", "cls_width"]
    summ = summarise(runs, keys)
    cols = ["acc", "ftpt"] if table == "T-CPLX" else ["acc", "ftpt", "ffpt"]
    cmp = side_by_side(summ, reference(table), keys, cols)
    return runs, summ, cmp


#: the order that pairs two selections of runs member by member (same widths, k, lr and seed)
PAIR_ORDER = ("dataset", "focus_width", "cls_width", "k", "lr", "seed")


def _select(runs: pd.DataFrame, where: dict) -> pd.DataFrame:
    m = pd.Series(True, index=runs.index)
    for key, v in where.items():
        m &= (runs[key].astype(float).round(8) == round(float(v), 8)) if isinstance(v, (int, float)) \
            else (runs[key] == v)
    rows = runs[m]
    return rows.sort_values([c for c in PAIR_ORDER if c in rows and c not in where])


def values(runs: pd.DataFrame, column: str, **where) -> np.ndarray:
    """One value per run of the runs matching ``where`` (e.g. ``layer="zeroth", k=0``), in a fixed
    order (widths, k, lr, seed), so that two selections pair up run by run for a paired claim.
    Empty when that setting was not run (the claim is then undecided, not skipped)."""
    return _select(runs, where)[column].to_numpy(dtype=float)


def cell_differences(runs: pd.DataFrame, column: str, a: dict, b: dict,
                     cells=("focus_width", "cls_width")) -> dict[str, np.ndarray]:
    """Per cell (each combination of the ``cells`` columns run under both settings), ``column`` of setting
    ``a`` minus setting ``b``, paired run by run: the data of a per-cell claim
    (``card.check(id, values=cell_differences(...))``). Cells run under one setting only are left out."""
    names = {"focus_width": "focus", "cls_width": "classifier"}
    out = {}
    for key in runs[list(cells)].drop_duplicates().sort_values(list(cells)).itertuples(index=False):
        where = {c: (int(v) if float(v).is_integer() else float(v)) for c, v in zip(cells, key)}
        p = paired(runs, column, {**a, **where}, {**b, **where})
        if len(p["a"]):
            out[" / ".join(f"{names.get(c, c)} {v}" for c, v in where.items())] = p["a"] - p["b"]
    return out


def paired(runs: pd.DataFrame, column: str, a: dict, b: dict) -> dict:
    """``{a: ..., b: ...}``: ``column`` of settings ``a`` and ``b`` paired run by run, for a directional
    claim (``card.check(id, **paired(...))``); both empty if either setting was not run."""
    va, vb = values(runs, column, **a), values(runs, column, **b)
    ok = len(va) == len(vb) and len(va) > 0
    return {"a": va if ok else np.array([]), "b": vb if ok else np.array([])}


def rates(runs: pd.DataFrame, a: dict, b: dict) -> dict:
    """``{successes: (k_a, k_b), trials: (n_a, n_b)}``: best-run counts of two settings, for a rate claim."""
    (ka, na), (kb, nb) = best_count(runs, **a), best_count(runs, **b)
    return {"successes": (ka, kb), "trials": (na, nb)}


def cap_note(runs: pd.DataFrame, epochs: int) -> str:
    """How many runs ended at the epoch cap without meeting the stopping rule (a note for the claims)."""
    at_cap = int((runs["stop_epoch"] >= epochs).sum())
    return f"{at_cap} of {len(runs)} runs stopped at the cap of {epochs} epochs" if at_cap else ""


def curve_at(res: dict, column: str, epoch: int, split: str = "train") -> np.ndarray:
    """Per run: ``column`` at the first recorded epoch >= ``epoch`` (curves are recorded every few epochs)."""
    ep = res["epochs"].numpy()
    t = int(np.searchsorted(ep, epoch)) if epoch <= ep[-1] else len(ep) - 1
    return res["curves"][split][column][:, t].numpy().astype(float)


# ------------------------------------------------------------------------------------------------
# F-TREND: the training curves of every k = 0 setting the synthetic tables run
#: what each table's programs are called in the chapter (words, not the tables' codes)
TREND_NAMES = {("d1", "A_1"): "dataset 1", ("d2", "A_2_1"): "dataset 2",
               ("d1", "D1-ecml"): "dataset 1, earlier nets", ("d2", "D2-ecml"): "dataset 2, earlier nets"}


def trend_settings(S) -> list[dict]:
    """F-TREND: the k = 0 programs of the synthetic tables, each with the settings of its table, so that the
    chapter reads the tables' cached runs (same configuration, same cache key): dataset 1 (A_1, T-D1) at
    ``d1_layers``; dataset 2 (A_2_1, T-D2a) at ``d2_layers``; with ``ecml``, T-LAYER's earlier nets (biases,
    default init): dataset 1 at ``ecml_layers`` with every learning rate of ``ecml_lrs`` in one program, and
    dataset 2 at ``ecml_d2_layers`` with lr 0.01."""
    aaai = {"n_seeds": S.n_seeds, "epochs": S.epochs, "lrs": (0.001,)}
    out = [{"table": "T-D1", "dataset": "d1", "arch": "A_1", "layer": layer, **aaai}
           for layer in parse_layers(S.d1_layers)]
    out += [{"table": "T-D2a", "dataset": "d2", "arch": "A_2_1", "layer": layer, **aaai}
            for layer in parse_layers(S.d2_layers)]
    if S.ecml:
        ecml = {"n_seeds": S.ecml_n_seeds, "epochs": S.ecml_epochs}
        out += [{"table": "T-LAYER", "dataset": "d1", "arch": "D1-ecml", "layer": layer,
                 "lrs": tuple(parse_list(S.ecml_lrs)), **ecml} for layer in parse_layers(S.ecml_layers)]
        out += [{"table": "T-LAYER", "dataset": "d2", "arch": "D2-ecml", "layer": layer, "lrs": (0.01,),
                 **ecml} for layer in parse_layers(S.ecml_d2_layers)]
    return out


def trend_config(setting: dict, dtype: str) -> dict:
    """The program configuration of one F-TREND setting (the same call its table makes, so the same key)."""
    return program_config(setting["dataset"], setting["arch"], layer=setting["layer"],
                          seeds=range(setting["n_seeds"]), epochs=setting["epochs"], dtype=dtype,
                          lrs=setting["lrs"])


def trend_run_config(S) -> dict:
    """F-TREND's per-run panels and claims: the dataset-1 (A_1) runs at ``layer``, t-d1's k = 0 program."""
    return program_config("d1", "A_1", layer=S.layer, seeds=range(S.n_seeds), epochs=S.epochs, dtype=S.dtype)


def trend_run(S) -> dict:
    """Train (or load) the program of :func:`trend_run_config`."""
    return T.run(trend_run_config(S))


def trend_configs(S) -> list[dict]:
    """Every program F-TREND reads (its declaration): the claims' runs and each setting of
    :func:`trend_settings`."""
    return [trend_run_config(S)] + [trend_config(s, S.dtype) for s in trend_settings(S)]


def alpha_config(S) -> dict:
    """F-ALPHA's runs: dataset 2 (A_2_2) at ``layer``, t-d2b's k = 0 program."""
    return program_config("d2", "A_2_2", layer=S.layer, seeds=range(S.n_seeds), epochs=S.epochs,
                          dtype=S.dtype)


def alpha_run(S) -> dict:
    """Train (or load) the program of :func:`alpha_config`."""
    return T.run(alpha_config(S))


def trend_programs(S) -> list[dict]:
    """Train (or load) every F-TREND setting. One entry per setting and learning rate: ``label``,
    ``table``, ``dataset``, ``layer``, ``lr``, ``epochs`` (the cap), ``result`` (the program) and
    ``members`` (the indices of its runs at that learning rate)."""
    out = []
    for s in trend_settings(S):
        res = T.run(trend_config(s, S.dtype))
        for lr in s["lrs"]:
            idx = [i for i, v in enumerate(res["members"]["lr"]) if np.isclose(v, lr)]
            label = f"{TREND_NAMES[(s['dataset'], s['arch'])]}, {s['layer']} layer"
            if s["table"] == "T-LAYER":
                label += f", lr {lr:g}"
            out.append({"label": label, "table": s["table"], "dataset": s["dataset"], "layer": s["layer"],
                        "lr": float(lr), "epochs": s["epochs"], "result": res, "members": idx})
    return out


def _paper_final(item: dict) -> dict:
    """The authors' final training FTPT and FFPT (and their number of runs) for an F-TREND setting, from its
    table (k = 0; T-D1 and T-D2a give accuracy and FTPT, so FFPT = accuracy - FTPT)."""
    t = reference(item["table"])
    if item["table"] == "T-LAYER":
        row = t[(t.dataset == item["dataset"]) & np.isclose(t.lr, item["lr"]) & (t.layer == item["layer"])]
    else:
        row = t[(t.layer == item["layer"]) & (t.k == 0)]
    if len(row) != 1:
        return {"ftpt": float("nan"), "ffpt": float("nan"), "n": 0}
    r = row.iloc[0]
    ffpt = float(r["ffpt"]) if "ffpt" in r and pd.notna(r["ffpt"]) else float(r["acc"] - r["ftpt"])
    return {"ftpt": float(r["ftpt"]), "ffpt": ffpt, "n": int(r["n"])}


def trend_table(items: list[dict]) -> pd.DataFrame:
    """F-TREND, one row per setting: how FFPT moves from initialisation to a tenth of the epoch cap (the
    interval of the paired rise, and the reading the registered rule of ``f-trend/ffpt-rises-early`` gives on
    these runs: shown, not counted as a claim), and the final training FTPT and FFPT, ours (mean ± sd over
    runs) beside the authors' (their table's mean)."""
    rule = registry.get("f-trend/ffpt-rises-early")
    rows = []
    for it in items:
        res, idx = it["result"], it["members"]
        start = curve_at(res, "ffpt", 0)[idx]
        early = curve_at(res, "ffpt", max(1, it["epochs"] // 10))[idx]
        rise = stats.difference_interval(early, start)
        paper = _paper_final(it)
        final = {c: res["final"]["train"][c].numpy()[idx].astype(float) for c in ("ftpt", "ffpt")}
        rows.append({
            "setting": it["label"], "runs": len(idx),
            "FFPT rise by 1/10 of the cap (95 % CI)": str(rise) if rise.n else "—",
            "rises early? (rule of the claim)": registry.decide(rule, a=early, b=start).status,
            "final FTPT: ours": stats.summary(final["ftpt"], "{:.1f}"),
            "final FTPT: paper": f"{paper['ftpt']:.1f} (n={paper['n']})" if paper["n"] else "—",
            "final FFPT: ours": stats.summary(final["ffpt"], "{:.1f}"),
            "final FFPT: paper": f"{paper['ffpt']:.1f} (n={paper['n']})" if paper["n"] else "—",
        })
    return pd.DataFrame(rows)


def best_count(runs: pd.DataFrame, **where) -> tuple[int, int]:
    """(best runs, runs) of a setting: a best run's training accuracy exceeds 90 % (the authors' filter)."""
    acc = _select(runs, where)["acc"].to_numpy(dtype=float)
    br = met.best_runs(torch.as_tensor(acc), {})
    return br["n_best"], br["n_runs"]
