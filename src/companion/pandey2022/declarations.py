"""What each chapter of this paper trains, declared without executing its notebook.

:data:`DECLARATIONS` maps a chapter id to ``declare(S) -> [Spec]``, built from the functions the
chapter's notebook trains through (:func:`.errormodes.program`, :func:`.studies.layer_k_configs`,
:func:`.studies.layer_lr_configs`, :func:`.studies.init_configs`, :func:`.studies.width_programs`,
:func:`.studies.sparsity_configs`, :func:`.studies.trend_configs`, :func:`.studies.alpha_config`, and
the program configurations of :mod:`.image_report`), so the two cannot drift apart (the drift test in
``tests/test_netspec.py`` builds the chapters and checks it). Every chapter of this paper declares: the
architecture and data pages train nothing (an empty list), and an image program is one task (the
initialisation table has one per seed), the pre-training of its seed computed inside it.
"""

from __future__ import annotations

from collections.abc import Callable

from . import errormodes, image_report, studies
from .specs import captioner_spec, image_spec, program_spec


def _error_mode(dist: str) -> Callable:
    return lambda S: [errormodes.program(dist, S.seed, S.n_seeds, S.epochs, S.data_seed)]


def _layer_k(table: str, dataset: str, arch_name: str) -> Callable:
    return lambda S: [program_spec(cfg) for cfg in studies.layer_k_configs(
        table, dataset, arch_name, S.layers, S.ks, S.n_seeds, S.epochs, S.dtype)]


def _width(table: str, dataset: str, arch_name: str, layers: str | None = None) -> Callable:
    def declare(S):
        cells = S.cells if "cells" in S else "all"
        progs = studies.width_programs(table, dataset, arch_name, layers or S.layers, S.focus_widths,
                                       S.cls_widths, S.n_seeds, S.epochs, S.dtype, cells)
        return [program_spec(studies.program_config(**kw)) for kw in progs]
    return declare


def _sparsity(table: str, layers: str, methods: str, S, k_by_layer: dict | None = None) -> list:
    """The programs of an appendix sparsity table, set up as its notebook calls ``sparsity_table``."""
    setup = studies.SPARSITY_SETUPS[table]
    return [program_spec(cfg) for *_, cfg in studies.sparsity_configs(
        setup["dataset"], setup["arch"], layers, methods, S.n_seeds, S.epochs, S.dtype, k_by_layer,
        setup["lr"], setup["stop_on"])]


def _t_a1(S) -> list:
    older = _sparsity("T-A1-older", "zeroth", "softmax,sparsemax", S) if S.older_setup else []
    return _sparsity("T-A1", "zeroth", S.methods, S) + older


def _t_a2(S) -> list:
    return _sparsity("T-A2", S.layers, S.methods, S, {"zeroth": S.k_zeroth, "second": S.k_second})


def _layer_lr(S) -> list:
    return [program_spec(cfg) for _, cfg in studies.layer_lr_configs(S.layers, S.lrs, S.n_seeds, S.epochs,
                                                                      S.dtype, S.with_d2, S.d2_layers)]


#: chapter id -> declare(S) -> [Spec] (the arguments are those of the chapter's notebook)
DECLARATIONS: dict[str, Callable] = {
    "f-em1": _error_mode("dist1"),
    "f-em2": _error_mode("dist2"),
    "f-em3": _error_mode("dist4"),
    "t-d1": _layer_k("T-D1", "d1", "A_1"),
    "t-d2a": _layer_k("T-D2a", "d2", "A_2_1"),
    "t-d2b": _layer_k("T-D2b", "d2", "A_2_2"),
    "t-layer": _layer_lr,
    "t-init-focus": lambda S: [program_spec(cfg) for *_, cfg in studies.init_configs(S.n_seeds, S.epochs,
                                                                                      S.dtype)],
    "t-cplx": _width("T-CPLX", "d2", "A_2_1"),
    "t-cplx-d1": _width("T-CPLX-D1", "d1", "D1-cplx", "zeroth"),
    "t-a1": _t_a1,
    "t-a2": _t_a2,
    "f-trend": lambda S: [program_spec(cfg) for cfg in studies.trend_configs(S)],
    "f-alpha": lambda S: [program_spec(studies.alpha_config(S))],
    "f-arch": lambda S: [],  # one untrained example network
    "t-data": lambda S: [],  # the data sets only
    "t-cifar-ent": lambda S: [image_spec(cfg) for cfg in image_report.ent_sparse_configs(S).values()],
    "t-cifar-sparse": lambda S: [image_spec(cfg) for cfg in image_report.ent_sparse_configs(S).values()],
    "t-cifar-ecml": lambda S: [image_spec(cfg) for cfg in image_report.ecml_configs(S).values()],
    "t-init": lambda S: [image_spec(cfg) for cfg in image_report.init_configs(S)],
    "f-coco": lambda S: [captioner_spec(image_report.captioner_config(S))],
    "t-coco": lambda S: [captioner_spec(image_report.captioner_config(S))],
}
