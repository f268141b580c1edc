"""Build simulator: the ``paper`` book's wall time on 2, 8 and 32 workers when networks are tasks.

Input: the recorded paper-budget runs ``results/paper/*.json`` and the ``shared_runs`` groups of
``_config.yml``. Nothing is trained; the script prints what it reads and what it estimates.

Measured (read from the records):
- a chapter record's ``wall_s`` (its own training plus its analysis), ``core_s`` where the record
  ran its programs on several workers (``split``), and ``cache`` (programs trained / reused);
- ``pretrained`` runs (programs trained outside the record: ``cpu_s`` or ``wall_s``, and the number
  of networks named in the run's description), counted once even when several chapters list them;
- ``split`` runs (one program per parameter value, ``seconds``).

Estimated (assumptions, stated again in the output):
- a program of N networks is N tasks of 1/N of its time each (seeds are independent; the batched
  ensemble costs per network less than a single run, so this understates total core time and is
  neutral for the critical path);
- training a record did itself without a breakdown is ``wall_s`` minus its analysis, divided into
  ``cache.trained`` programs (1 if unknown), each of ``n_seeds`` networks;
- a record made on fewer seeds than the ``paper`` profile's value in ``_config.yml`` gets more
  network tasks of the same size (the README scales such records the same way);
- a chapter's analysis (executing the notebook once its networks are cached) is its ``wall_s``
  when it trained nothing; otherwise the median of those measured analysis times.

Schedule: list scheduling, longest first, of all network tasks on W workers; then, once every network
exists, the chapter tasks (analysis only). Three schemes side by side:

- chapters: a chapter is a task (the chapters of a ``shared_runs`` group run as one task), as before
  networks became tasks;
- as built: what ``companion build`` does now. An Aitken et al. ensemble trains as one task per seed
  and is stacked afterwards (``companion/aitken2021/specs.py``; the learned-attention chapters, whose
  ensembles train through their own function, stay one program); every Pandey et al. program (one
  cell's seeds) is one task;
- networks: every network its own task, the bound when the Pandey programs are split as well.

Each is compared with the longest single network.

Usage: ``python benchmarks/bench_build_sim.py [--results results/paper] [--workers 2,8,32]
[--speedup-aitken 1.0]`` (``--speedup-aitken``: divide Aitken training times by a measured step ratio).
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import statistics
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
AITKEN = re.compile(r"^(fig\d|app-|tab-accuracy)")


def makespan(durations: list[float], workers: int) -> float:
    """Longest-processing-time-first list scheduling."""
    loads = [0.0] * workers
    heapq.heapify(loads)
    for d in sorted(durations, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + d)
    return max(loads) if durations else 0.0


def n_networks(what: str, fallback: int) -> int:
    """Networks in a pretrained run, from its description ('6 networks', '10 seeds', '(3 cells)')."""
    m = re.search(r"(\d+) networks?\b", what)
    if m:
        return int(m.group(1))
    seeds = re.search(r"(\d+) seeds", what)
    cells = re.search(r"\((\d+) cells?\)", what)
    if seeds:
        return int(seeds.group(1)) * (int(cells.group(1)) if cells else 1)
    return max(1, fallback)


def load(results: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(results.glob("*.json"))]


def paper_defaults(config: dict, chapter: str) -> dict:
    """The ``paper`` profile's value of each parameter of a chapter in ``_config.yml``."""
    out = {}
    for name, spec in ((config.get("chapters") or {}).get(chapter) or {}).items():
        d = spec.get("default") if isinstance(spec, dict) else None
        out[name] = d.get("paper") if isinstance(d, dict) else d
    return out


def seed_factor(params: dict, paper: dict, name: str | None) -> float:
    """Networks at the paper budget per network in the record (records made on fewer seeds are scaled)."""
    if not name or not params.get(name) or not paper.get(name):
        return 1.0
    return float(paper[name]) / float(params[name])


#: Aitken chapters whose ensembles train as one program (their own fetch function: not split per seed)
UNSPLIT = ("app-learned-attention", "app-multihead")


def programs_as_built(nets: list[tuple[float, str, str]]) -> list[float]:
    """The tasks ``companion build`` runs today: Aitken networks one by one, every other program whole
    (the networks of one label are one program)."""
    units: dict[str, float] = {}
    for i, (secs, ch, label) in enumerate(nets):
        key = f"{i}" if AITKEN.match(ch) and ch not in UNSPLIT else label
        units[key] = units.get(key, 0.0) + secs
    return list(units.values())


def build_tasks(records: list[dict], speedup_aitken: float, config: dict):
    """Network tasks ``[(seconds, chapter, label)]``, chapter analysis tasks and notes. The networks of
    one program share a label."""
    analysis_measured = {r["chapter"]: r["wall_s"] for r in records
                         if (r.get("cache") or {}).get("trained", None) == 0}
    analysis_default = statistics.median(analysis_measured.values())
    nets: list[tuple[float, str, str]] = []
    chapters: dict[str, float] = {}
    seen_pretrained: set[str] = set()
    scaled: list[str] = []
    for r in records:
        ch, wall = r["chapter"], float(r["wall_s"])
        params = r.get("parameters") or {}
        paper = paper_defaults(config, ch)
        for name in params:
            if "seeds" in name and seed_factor(params, paper, name) != 1.0:
                scaled.append(f"{ch} {name} {params[name]} -> {paper[name]}")
        seeds = int(params.get("n_seeds", 1) or 1)
        scale = speedup_aitken if AITKEN.match(ch) else 1.0
        for run in (r.get("pretrained") or {}).get("runs", []):
            what = run.get("what", "")
            if what in seen_pretrained:
                continue
            seen_pretrained.add(what)
            secs = run.get("cpu_s") or run.get("wall_s") or 0.0
            k = n_networks(what, int(params.get(run.get("scales_with") or "", seeds) or seeds))
            copies = round(k * seed_factor(params, paper, run.get("scales_with")))
            nets += [(secs / k / scale, ch, f"{ch}: {what[:50]} (1/{k})")] * copies if secs else []
        trained = (r.get("cache") or {}).get("trained", None)
        analysis = analysis_measured.get(ch, min(wall, analysis_default))
        chapters[ch] = analysis
        factor = seed_factor(params, paper, "n_seeds")
        if r.get("split"):
            for run in r["split"]["runs"]:
                nets += [(run["seconds"] / seeds / scale, ch,
                          f"{ch}: {run['value']} (1/{seeds})")] * round(seeds * factor)
            continue
        own = max(0.0, wall - analysis)
        if own > 0:
            programs = max(1, int(trained or 1))
            per = own / programs / seeds / scale
            for j in range(programs):
                label = f"{ch}: own training, program {j + 1} of {programs} (1/{programs * seeds})"
                nets += [(per, ch, label)] * round(seeds * factor)
    return nets, chapters, analysis_default, analysis_measured, scaled


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(ROOT / "results" / "paper"))
    ap.add_argument("--workers", default="2,8,32")
    ap.add_argument("--speedup-aitken", type=float, default=1.0)
    args = ap.parse_args()
    records = load(Path(args.results))
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    groups = config.get("shared_runs", {})
    nets, chapters, analysis_default, measured, scaled = build_tasks(records, args.speedup_aitken, config)
    longest = max(nets)
    total_nets, total_ch = sum(d for d, _, _ in nets), sum(chapters.values())
    print(f"{len(records)} chapter records, {len(nets)} network tasks "
          f"({total_nets / 3600:.1f} core-h), {len(chapters)} chapter tasks ({total_ch / 3600:.2f} core-h)")
    print(f"measured analysis-only chapters: {', '.join(f'{k} {v:.0f} s' for k, v in measured.items())}; "
          f"estimated analysis of the others: {analysis_default:.0f} s each")
    print(f"records on fewer seeds than the paper profile, scaled by network count (estimated): "
          f"{'; '.join(scaled) or 'none'}")
    print(f"longest single network: {longest[0]:.0f} s = {longest[2]}")
    if args.speedup_aitken != 1.0:
        print(f"Aitken training divided by {args.speedup_aitken:.2f} (estimate from a measured step ratio)")

    # today's scheme: a chapter is a task (its networks and its analysis); a shared_runs group is one task
    in_group = {c: g for g, cs in groups.items() for c in cs}
    old_tasks: dict[str, float] = {}
    for ch, secs in chapters.items():
        old_tasks[in_group.get(ch, ch)] = old_tasks.get(in_group.get(ch, ch), 0.0) + secs
    for secs, ch, _ in nets:
        old_tasks[in_group.get(ch, ch)] += secs
    top = max(old_tasks, key=old_tasks.get)
    print(f"\nserial: {(total_nets + total_ch) / 3600:.1f} core-h; longest task today (chapter or group): "
          f"{old_tasks[top] / 3600:.2f} h ({top})")
    built = programs_as_built(nets)
    print(f"as built: {len(built)} network tasks, the longest {max(built):.0f} s")
    print(f"{'workers':>8} {'chapters':>10} {'as built':>10} {'/ longest':>10} {'networks':>10} "
          f"{'/ longest':>10}")
    for w in (int(x) for x in args.workers.split(",")):
        old = makespan(list(old_tasks.values()), w)
        now = makespan(built, w) + makespan(list(chapters.values()), w)
        new = makespan([d for d, _, _ in nets], w) + makespan(list(chapters.values()), w)
        print(f"{w:>8} {old / 3600:>8.2f} h {now / 3600:>8.2f} h {now / longest[0]:>9.2f}x "
              f"{new / 3600:>8.2f} h {new / longest[0]:>9.2f}x")
    print("goal: <= 1.5 x the longest single network on 32 workers. Measured inputs: recorded wall/cpu/core "
          "seconds on a 2-core machine; estimated: per-network shares, analysis times (see --help).")


if __name__ == "__main__":
    main()
