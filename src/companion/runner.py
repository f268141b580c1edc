"""Execute one chapter with papermill, with validated parameters.

Everything is checked before papermill starts, so a bad chapter name or value
fails in a line and leaves nothing behind (no output notebook, no cache entry).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import chapters, claims, config

#: Environment for the kernels that run chapters (the user's own values win). glibc raises its mmap
#: threshold as large buffers are freed, so later temporaries stay in the heap and a chapter's peak
#: grows with them; a fixed 1 MiB threshold returns such buffers when freed. Figure 2 at 70 networks
#: (49 analysed), run by `companion run`: peak 7.6 -> 6.4 GB with identical claims, training time unchanged
#: (2026-12-07).
KERNEL_ENV = {"MALLOC_MMAP_THRESHOLD_": str(2**20)}


def prepare(chapter_id: str, raw_params: Mapping[str, Any], profile: str | None = None) -> dict[str, Any]:
    """Validate a chapter run; returns the parameters to inject (``profile`` included).

    ``raw_params`` values may be strings from the command line (parsed as YAML
    scalars) or already-typed Python values.
    """
    chapters.get(chapter_id)  # unknown chapter -> ConfigError
    schema = config.schema(chapter_id)
    prof = config.active_profile(profile)
    params: dict[str, Any] = {}
    for name, value in raw_params.items():
        if name == "profile":
            prof = config.active_profile(str(value))
            continue
        if name not in schema:
            allowed = ", ".join(["profile", *schema])
            raise config.ConfigError(f"{chapter_id}: unknown parameter {name!r}; allowed: {allowed}")
        p = schema[name]
        params[name] = p.parse(value, chapter_id) if isinstance(value, str) else p.check(value, chapter_id)
    # The chapter's declared trainings, resolved from these settings: checks that need more than one
    # parameter's range (a CIFAR-10 folder that is not there) fail here, before anything runs.
    from . import networks

    networks.chapter_specs(chapter_id, prof, params)
    params["profile"] = prof
    return params


def run(
    chapter_id: str,
    raw_params: Mapping[str, Any] | None = None,
    profile: str | None = None,
    output_dir: str | Path = "companion-runs",
    timeout: int | None = None,
) -> tuple[Path, list[claims.Claim]]:
    """Execute the chapter into ``output_dir/<id>.ipynb``; returns that path and its claims."""
    import papermill as pm

    params = prepare(chapter_id, raw_params or {}, profile)
    chapter = chapters.get(chapter_id)
    out_dir = Path(output_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    out_nb = out_dir / f"{chapter_id}.ipynb"
    claims_file = out_dir / f"{chapter_id}.claims.json"
    claims_file.unlink(missing_ok=True)
    old = os.environ.get(claims.CLAIMS_FILE_ENV)
    os.environ[claims.CLAIMS_FILE_ENV] = str(claims_file)  # the kernel inherits it
    added = {k: v for k, v in KERNEL_ENV.items() if k not in os.environ}
    os.environ.update(added)
    try:
        pm.execute_notebook(
            str(chapter.path),
            str(out_nb),
            parameters=params,
            kernel_name="python3",
            cwd=str(chapter.path.parent),
            progress_bar=False,
            log_output=False,
            execution_timeout=timeout,
        )
    finally:
        for k in added:
            os.environ.pop(k, None)
        if old is None:
            os.environ.pop(claims.CLAIMS_FILE_ENV, None)
        else:
            os.environ[claims.CLAIMS_FILE_ENV] = old
    recorded = claims.load_file(claims_file) if claims_file.is_file() else []
    return out_nb, recorded
