"""What each chapter of this paper trains, declared without executing its notebook.

:data:`DECLARATIONS` maps a chapter id to ``declare(S) -> [Spec]``, built from the functions the
chapter's notebook trains through (:func:`.errormodes.program`, :func:`.studies.layer_k_configs`),
so the two cannot drift apart. Declared: the error-mode figures and the (layer, k) tables. The other
chapters of this paper (sparsity, width, initialisation and learning-rate tables, the trend and
alpha figures, the image and captioning chapters) declare nothing yet and train inside their
notebooks, cached and locked as before.
"""

from __future__ import annotations

from collections.abc import Callable

from . import errormodes, studies
from .specs import program_spec


def _error_mode(dist: str) -> Callable:
    return lambda S: [errormodes.program(dist, S.seed, S.n_seeds, S.epochs, S.data_seed)]


def _layer_k(table: str, dataset: str, arch_name: str) -> Callable:
    return lambda S: [program_spec(cfg) for cfg in studies.layer_k_configs(
        table, dataset, arch_name, S.layers, S.ks, S.n_seeds, S.epochs, S.dtype)]


#: chapter id -> declare(S) -> [Spec] (the arguments are those of the chapter's notebook)
DECLARATIONS: dict[str, Callable] = {
    "f-em1": _error_mode("dist1"),
    "f-em2": _error_mode("dist2"),
    "f-em3": _error_mode("dist4"),
    "t-d1": _layer_k("T-D1", "d1", "A_1"),
    "t-d2a": _layer_k("T-D2a", "d2", "A_2_1"),
    "t-d2b": _layer_k("T-D2b", "d2", "A_2_2"),
}
