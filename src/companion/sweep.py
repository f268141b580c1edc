"""``companion sweep``: one chapter, once per value of a parameter, in parallel.

    companion sweep f-em1 -p seed 0:8 --workers 2
    companion sweep t-d1 -p seed 1,5,9 --scheduler tcp://10.0.0.5:8786 --json

Values are a comma-separated list or a half-open integer range (``0:10`` is 0
to 9); list parameters (those taking comma-separated items) separate values
with ``;``. Every value is validated before anything runs. Each run is a
normal ``companion run`` with that override; its notebook and claims land in
``OUTPUT/NAME=VALUE/``. The networks the runs declare are trained first, each as its own
task (:mod:`companion.prebuild`; ``--dry-run`` lists them and stops). The summary says, per
claim, in how many runs it passed, failed or was undecided, and the spread of its estimate.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from . import claims, config, parallel, prebuild, runner


def parse_values(chapter_id: str, name: str, text: str, profile: str | None) -> list[str]:
    """The sweep's values as strings, each checked by ``runner.prepare``; ConfigError if any is bad."""
    m = re.fullmatch(r"\s*(-?\d+)\s*:\s*(-?\d+)\s*", text)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi <= lo:
            raise config.ConfigError(
                f"empty range {text!r}: {name} {lo}:{hi} holds no value (half-open, e.g. 0:10)"
            )
        values = [str(v) for v in range(lo, hi)]
    else:
        schema = config.schema(chapter_id) if name != "profile" else {}
        sep = ";" if name in schema and schema[name].items is not None else ","
        values = [v.strip() for v in text.split(sep)]
        if not all(values):
            raise config.ConfigError(f"empty value in {text!r}; give values separated by {sep!r}")
    if len(set(values)) != len(values):
        raise config.ConfigError(f"repeated value in {text!r}")
    for v in values:
        runner.prepare(chapter_id, {name: v}, profile)
    return values


def _folder_name(name: str, value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]", "_", f"{name}={value}")


def spread(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "n": len(values),
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
    }


def summarize(runs: list[dict]) -> list[dict]:
    """Per claim id (in order of first appearance): status counts and the spread of the estimates."""
    table: dict[str, dict[str, Any]] = {}
    for run in runs:
        for c in run.get("claim_objects", []):
            row = table.setdefault(
                c.id,
                {
                    "id": c.id,
                    "figure": getattr(c, "figure", ""),
                    "pass": 0,
                    "fail": 0,
                    "undecided": 0,
                    "estimates": [],
                },
            )
            s = parallel.status_of(c)
            row[s] = row.get(s, 0) + 1
            est = getattr(c, "estimate", None)  # older claims carry none
            if isinstance(est, (int, float)) and est == est:  # not NaN
                row["estimates"].append(float(est))
    out = []
    for row in table.values():
        est = row.pop("estimates")
        row["runs"] = row["pass"] + row["fail"] + row["undecided"]
        row["estimate"] = spread(est)
        out.append(row)
    return out


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def network_requests(chapter_id: str, name: str, values: list[str], profile: str | None) -> list:
    """One prebuild request per value: the chapter's networks under that value (:mod:`companion.prebuild`)."""
    out = []
    for v in values:
        params = runner.prepare(chapter_id, {name: v}, profile)
        prof = params.pop("profile")
        out.append((chapter_id, prof, params))
    return out


def sweep(
    chapter_id: str,
    name: str,
    values: list[str],
    profile: str | None,
    output: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    log=print,
) -> dict:
    prof = config.active_profile(profile)
    tasks = [dict(chapter_id=chapter_id, profile=prof, params={name: v}) for v in values]
    by_value = {}
    t0 = time.perf_counter()
    # Networks as tasks: every value's declared networks first, each its own task, longest first.
    lost = prebuild.prebuild(network_requests(chapter_id, name, values, profile), workers, scheduler, log=log)
    if lost:
        raise RuntimeError(prebuild.failure_text(lost[0]))
    for done, r in enumerate(parallel.run_tasks(tasks, workers, scheduler, log=log), 1):
        value = r["params"][name]
        run = {"value": value, "ok": bool(r.get("ok")), "seconds": round(r["seconds"], 1)}
        if r.get("ok"):
            folder = output / _folder_name(name, value)
            nb_path, claims_path = folder / f"{chapter_id}.ipynb", folder / f"{chapter_id}.claims.json"
            parallel.atomic_write(claims_path, json.dumps(r["claims"], indent=1))
            parallel.atomic_write(nb_path, r["notebook"])
            run["claim_objects"] = claims.load_file(claims_path)
            run["counts"] = parallel.counts(r["claims"])
            run["output"] = str(nb_path)
        else:
            run["error"] = r["error"]
        by_value[value] = run
        log(parallel.progress_line(r, done, len(tasks), label=f"{chapter_id} {name}={value}"))
    wall = time.perf_counter() - t0
    runs = [by_value[v] for v in values]
    result = {
        "chapter": chapter_id,
        "parameter": name,
        "values": values,
        "profile": prof,
        "wall_seconds": round(wall, 1),
        "run_seconds": round(sum(r["seconds"] for r in runs), 1),
        "claims": summarize(runs),
        "runs": [{k: v for k, v in r.items() if k != "claim_objects"} for r in runs],
    }
    parallel.atomic_write(output / "sweep.json", json.dumps(result, indent=1))
    return result


def print_summary(result: dict, file=sys.stdout) -> None:
    ok = sum(r["ok"] for r in result["runs"])
    print(
        f"sweep {result['chapter']} over {result['parameter']} = {', '.join(result['values'])} "
        f"(profile {result['profile']}): {ok} of {len(result['runs'])} runs completed in "
        f"{result['wall_seconds']:.0f} s (the runs took {result['run_seconds']:.0f} s together)",
        file=file,
    )
    for r in result["runs"]:
        if not r["ok"]:
            print(f"  {result['parameter']}={r['value']} FAILED: {r['error']}", file=file)
    if not result["claims"]:
        print("no claims recorded", file=file)
        return
    w = max(12, *(len(c["id"]) for c in result["claims"]))
    print(f"\n{'claim':<{w}}  pass  fail  undecided   estimate: min / median / max (mean ± sd)", file=file)
    for c in result["claims"]:
        e = c["estimate"]
        est = (
            f"{_fmt(e['min'])} / {_fmt(e['median'])} / {_fmt(e['max'])} ({_fmt(e['mean'])} ± {_fmt(e['sd'])})"
            if e
            else "-"
        )
        print(f"{c['id']:<{w}}  {c['pass']:>4}  {c['fail']:>4}  {c['undecided']:>9}   {est}", file=file)
