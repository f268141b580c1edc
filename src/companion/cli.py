"""The ``companion`` command: list chapters, run one with parameters, print the scorecard.

    companion --version
    companion list [CHAPTER] [--params] [--json]
    companion run CHAPTER [-p NAME VALUE]... [--profile P] [--output DIR] [--scheduler ADDRESS]
    companion sweep CHAPTER -p NAME VALUES [--workers N | --scheduler ADDRESS] [--profile P] [--json]
    companion build [--workers N | --scheduler ADDRESS] [--profile P] [--path-output DIR]
    companion scorecard [--json] [--profile P]
    companion plan [CHAPTER] [--json] [--profile paper|quick]
    companion record CHAPTER [--until-decided --max-seeds N [--stages 5,10,20,40]] [--deviation NAME] ...

Bad input (unknown chapter, parameter or value) prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__, chapters, claims, config, parallel, runner
from .cliargs import Parser, positive


def _list(args) -> int:
    profile = config.active_profile(args.profile)
    from . import records

    timings = parallel.load_timings(parallel.cache_timings_file())
    costs = records.load_costs().get("chapters", {})
    rows = []
    for ch in chapters.all_chapters():
        try:
            schema = config.schema(ch.id)
        except config.ConfigError:
            schema = {}
        rows.append(
            {
                "id": ch.id,
                "paper": ch.paper,
                "figure": ch.figure,
                "title": ch.title,
                "notebook": str(ch.path.relative_to(ch.path.parents[2])),
                "parameters": {n: p.default_for(profile) for n, p in schema.items()},
                "help": {n: p.help for n, p in schema.items()},
                "allowed": {n: p.allowed() for n, p in schema.items()},
                # Last measured execution in a book build, per profile, in seconds.
                "seconds": {prof: t[ch.id] for prof, t in sorted(timings.items()) if ch.id in t},
                # The papers' budget, extrapolated from a measured quick run (results/cost.json).
                "paper_estimate_s": ([costs[ch.id]["paper_s_low"], costs[ch.id]["paper_s_high"]]
                                     if ch.id in costs else None),
                # The papers' budget as measured: the recorded run (results/paper/<id>.json).
                "paper_recorded": ({"wall_s": rec["wall_s"], "label": records.label(rec), "date": rec["date"]}
                                   if (rec := records.load(ch.id, "paper")) else None),
                # The best cost figure on one core (the README's table): the record's CPU time with its
                # beforehand training, scaled up when partial; else the extrapolation.
                "paper_cost": {k: v for k, v in records.paper_cost(ch.id, costs).items() if k != "record"},
                # The findings' verdicts in the recorded paper run, counted.
                "recorded": _recorded_counts(ch.id),
            }
        )
    if args.chapter:
        rows = [r for r in rows if r["id"] == chapters.get(args.chapter).id]  # unknown: one-line error
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if args.params or args.chapter:
        _print_parameters(rows, profile)
        return 0
    wi, wf = (max(len(r[k]) for r in rows) for k in ("id", "figure"))
    print(f"{'chapter':<{wi}}  {'figure':<{wf}}  {'last ' + profile:>11}  findings in the recorded paper run")
    for r in rows:
        last = r["seconds"].get(profile)
        last = "—" if last is None else f"{last:.0f} s"
        print(f"{r['id']:<{wi}}  {r['figure']:<{wf}}  {last:>11}  {r['recorded']}")
    print("\nparameters: companion list CHAPTER, or companion list --params")
    return 0


def _recorded_counts(chapter: str) -> str:
    """The verdict counts of a chapter's recorded ``paper`` run, findings only (``—``: no record)."""
    from . import records

    rec = records.load(chapter, "paper")
    if rec is None:
        return "—"
    found = claims.findings(records.recorded_claims(rec))
    if not found:
        return "no findings (preconditions only)"
    c = claims.counts(found)
    text = f"{c['pass']} pass, {c['fail']} fail, {c['undecided']} undecided"
    if c["not testable"]:
        text += f", {c['not testable']} not testable"
    return text + (" (stale)" if records.stale_ids(rec) else "")


def _print_parameters(rows: list[dict], profile: str) -> None:
    print(f"profile: {profile}")
    for r in rows:
        last = "  ".join(f"{p} {s:.0f} s" for p, s in r["seconds"].items())
        last = f"   [last run: {last}]" if last else ""
        cost = r["paper_cost"]
        if cost["low_s"] is not None:
            lo, hi = (x / 3600 for x in (cost["low_s"], cost["high_s"]))
            span = f"{lo:.1f} h" if lo == hi else f"{lo:.1f}-{hi:.1f} h"
            last += f"   [paper: {span} on one core, {cost['how']}]"
        if r["paper_recorded"]:
            last += (f"   [recorded {r['paper_recorded']['label']}, "
                     f"wall time {r['paper_recorded']['wall_s'] / 60:.1f} min]")
        print(f"\n{r['id']:<16} {r['paper']}  {r['figure']}: {r['title']}{last}")
        for name, default in r["parameters"].items():
            print(f"    {name:<14} = {default!r:<12} {r['allowed'][name]:<28} {r['help'][name]}")


def _run(args) -> int:
    params: dict[str, str] = {}
    for name, value in args.param or []:
        params[name] = value
    # Validate first: errors raise ConfigError before anything is executed or written.
    runner.prepare(args.chapter, params, args.profile)
    if args.scheduler:
        out_nb, recorded = _run_on_cluster(args, params)
    else:
        out_nb, recorded = runner.run(args.chapter, params, args.profile, args.output)
    print(f"executed {args.chapter} -> {out_nb}")
    if recorded:
        frame = claims.to_frame(recorded)
        print(claims.counts_text(recorded) + "\n")
        print(frame[["id", "expected", "observed", "status"]].to_string(index=False))
    else:
        print("this chapter recorded no claims")
    return 0


def _run_on_cluster(args, params):
    """``companion run --scheduler``: the run is a task on a worker; its files land here as a local run's."""
    import json as _json
    from pathlib import Path

    profile = config.active_profile(args.profile)
    (r,) = parallel.run_tasks([dict(chapter_id=args.chapter, profile=profile, params=params)],
                              scheduler=args.scheduler, log=lambda *a: print(*a, file=sys.stderr))
    if not r.get("ok"):
        raise RuntimeError(f"{args.chapter} failed on {r.get('host', '?')}: {r['error']}")
    out = Path(args.output).resolve()
    out_nb, claims_file = out / f"{args.chapter}.ipynb", out / f"{args.chapter}.claims.json"
    parallel.atomic_write(claims_file, _json.dumps(r["claims"], indent=1))
    parallel.atomic_write(out_nb, r["notebook"])
    print(parallel.progress_line(r, 1, 1), file=sys.stderr)
    return out_nb, claims.load_file(claims_file)


def _sweep(args) -> int:
    from pathlib import Path

    from . import sweep

    if len(args.param) != 1:
        raise config.ConfigError("sweep takes one -p NAME VALUES")
    (name, text), = args.param
    values = sweep.parse_values(args.chapter, name, text, args.profile)  # all checked before any run
    if args.dry_run:
        from . import prebuild

        prebuild.prebuild(sweep.network_requests(args.chapter, name, values, args.profile), dry_run=True)
        return 0
    output = Path(args.output or f"companion-sweeps/{args.chapter}-{name}").resolve()
    progress = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON only

    def log(*a):
        print(*a, file=progress, flush=True)

    result = sweep.sweep(args.chapter, name, values, args.profile, output, args.workers, args.scheduler,
                         log=log)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print()
        sweep.print_summary(result)
        print(f"\nnotebooks and claims in {output}/{name}=VALUE/; summary in {output / 'sweep.json'}")
    return 0 if all(r["ok"] for r in result["runs"]) else 1


def _build(args) -> int:
    from . import bookbuild

    return bookbuild.run_build(args)


def _scorecard(args) -> int:
    profile = config.active_profile(args.profile)
    found, missing = claims.scorecard_claims(profile)
    if args.json:
        keys = ("chapter", "paper", "figure", "id", "claim", "expected", "observed", "criterion", "status",
                "estimate", "lo", "hi", "n", "reference", "revised", "profile")
        from . import registry

        def why(c):  # why a fail fails (kind, why, evidence), from the registry
            e = registry.fail_entry(c.id) if c.status == "fail" else None
            return dict(e.if_fails) if e else None

        print(json.dumps([{**{k: getattr(c, k) for k in keys}, "passed": c.passed, "if_fails": why(c)}
                          for c in found], indent=1))
        return 0
    print(f"profile: {profile}   {claims.counts_text(found)}")
    for paper in chapters.PAPERS:
        group = [c for c in found if c.paper == paper]
        if group:
            print(f"  {paper}: {claims.counts_text(group)}")
    if found:
        frame = claims.to_frame(found)
        print(frame[["chapter", "id", "observed", "status"]].to_string(index=False))
    if missing:
        print(f"\nno claims stored yet for: {', '.join(missing)} (run them, or build the book)")
    return 0


def _record(args) -> int:
    from . import recording, records

    params = {name: value for name, value in args.param or []}
    runner.prepare(args.chapter, params, args.profile)  # bad input: one line, nothing run or written
    if args.deviation is not None and args.until_decided:  # the rest is checked by recording.record
        raise config.ConfigError("--deviation and --until-decided do not go together")
    if args.workers < 1:
        raise config.ConfigError(f"--workers must be at least 1, got {args.workers}")
    def log(*a):
        print(*a, file=sys.stderr)

    if args.dry_run:
        _record_dry_run(args, params)
        return 0
    if args.until_decided:  # staged: add seeds stage by stage until the findings decide
        if args.max_seeds is None:
            raise config.ConfigError("--until-decided needs --max-seeds N")
        path = recording.record_until_decided(args.chapter, params, args.profile, args.max_seeds,
                                              args.stages, workers=args.workers, split=args.split, log=log)
    elif args.max_seeds is not None or args.stages != recording.STAGES:
        raise config.ConfigError("--max-seeds and --stages go with --until-decided")
    else:
        path = recording.record(args.chapter, params, args.profile, workers=args.workers, split=args.split,
                                log=log, deviation=args.deviation)
    rec = records.load(args.chapter, args.profile, args.deviation)
    print(f"recorded {args.chapter} -> {path.relative_to(path.parents[2])}")
    print(f"{records.provenance(rec)}; {claims.counts_text(records.recorded_claims(rec))}")
    return 0


def _record_dry_run(args, params: dict) -> None:
    """``record --dry-run``: the networks the record would train (every stage's, with --until-decided)."""
    from . import prebuild

    if args.until_decided:
        if args.max_seeds is None:
            raise config.ConfigError("--until-decided needs --max-seeds N")
        if "n_seeds" in params:
            raise config.ConfigError("--until-decided sets n_seeds itself: drop -p n_seeds")
        runs = [{**params, "n_seeds": str(n)} for n in args.stages if n <= args.max_seeds]
    else:
        runs = [params]
    requests = []
    for raw in runs:
        typed = runner.prepare(args.chapter, raw, args.profile)
        requests.append((args.chapter, typed.pop("profile"), typed))
    prebuild.prebuild(requests, dry_run=True)


def _plan(args) -> int:
    from . import plan

    if args.chapter is not None and args.chapter not in config.chapter_ids():
        raise config.ConfigError(f"unknown chapter {args.chapter!r} (companion list shows them)")
    rows = plan.plan_rows(plan.load_claims(args.profile, args.chapter), args.profile)
    if args.json:
        print(plan.as_json(rows))
        return 0
    where = args.chapter or "the book"
    print(f"profile: {args.profile}   seeds to decide the undecided findings of {where} "
          f"(expected interval at the observed mean and spread; see companion.plan)")
    print(plan.plan_text(rows))
    return 0


def _verify(args) -> int:
    import time

    from . import recording, records

    t0 = time.perf_counter()
    ok, diffs = recording.verify(args.chapter, args.profile, args.deviation)
    records.mark_verified(args.chapter, args.profile, ok, diffs, time.perf_counter() - t0, args.deviation)
    if ok:
        print(f"{args.chapter}: the re-run agrees with the {args.profile} record (verdicts; estimates within "
              f"rel {records.VERIFY_RTOL:g})")
        return 0
    print(f"{args.chapter}: the re-run differs from the {args.profile} record:")
    for line in diffs:
        print("  " + line)
    return 1


def _stages(text: str) -> tuple[int, ...]:
    try:
        looks = tuple(int(t) for t in text.split(","))
    except ValueError:
        looks = ()
    if not looks or min(looks) < 1 or list(looks) != sorted(set(looks)):
        raise argparse.ArgumentTypeError(f"expected increasing whole numbers like 5,10,20,40, got {text!r}")
    return looks


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  companion {line}".rstrip() for line in lines)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="companion", description="Run and inspect the attention-companion chapters.",
               epilog=_examples("list", "run fig2 --profile smoke", "record t-d1 --profile paper"),
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"companion {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    def add(name: str, help: str, *examples: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                              epilog=_examples(*(f"{name} {e}" for e in examples)),
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    pl = add("list", "every chapter, one line each: figure, last run time, recorded verdicts",
             "", "f-em1", "--params --profile smoke", "--json")
    pl.add_argument("chapter", nargs="?", help="show this chapter's parameters")
    pl.add_argument("--params", action="store_true", help="show every chapter's parameters")
    pl.add_argument("--json", action="store_true", help="everything, as JSON")
    pl.add_argument("--profile", help="show the defaults and times of this profile")
    pl.set_defaults(func=_list)
    pr = add("run", "execute a chapter with papermill and print its claims",
             "fig2 --profile smoke", "t-d1 -p n_seeds 3 --output runs/", "f-em1 --scheduler tcp://10.0.0.5:8786")
    pr.add_argument("chapter")
    pr.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    pr.add_argument("--profile", help="smoke, quick or paper")
    pr.add_argument("--output", default="companion-runs", help="folder for the executed notebook")
    pr.add_argument("--scheduler", metavar="ADDRESS", help="run it on this Dask scheduler, e.g. tcp://10.0.0.5:8786")
    pr.set_defaults(func=_run)
    pw = add("sweep", "run a chapter once per value of a parameter, in parallel",
             "f-em1 -p seed 0:4 --profile smoke", "t-d1 -p n_seeds 3,5 --workers 2")
    pw.add_argument("chapter")
    pw.add_argument("-p", "--param", nargs=2, action="append", required=True, metavar=("NAME", "VALUES"),
                    help="values: a,b,c or a half-open range 0:10 (list parameters: a;b;c)")
    pw.add_argument("--profile", help="smoke, quick or paper")
    where = pw.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive, metavar="N",
                       help="runs at once here (default: one per core)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler")
    pw.add_argument("--output", help="folder for the runs (default: companion-sweeps/CHAPTER-NAME)")
    pw.add_argument("--json", action="store_true", help="print the summary as JSON (progress goes to stderr)")
    pw.add_argument("--dry-run", action="store_true",
                    help="list the networks the runs declare (to train or cached, estimated cost) and stop")
    pw.set_defaults(func=_sweep)
    pb = add("build", "execute the chapters in parallel (or on a cluster), then the book",
             "--profile smoke --path-output _build/smoke", "--workers 2",
             "--scheduler tcp://10.0.0.5:8786")
    from . import bookbuild

    bookbuild.add_arguments(pb)
    pb.set_defaults(func=_build)
    prc = add("record", "run a chapter and keep its verdicts with provenance in results/",
              "t-d1 --profile paper", "t-d2b --profile paper --workers 2 --split layers",
              "fig2 --profile paper -p n_seeds 5",
              "tab-accuracy --profile paper -p l2 1e-4 --deviation l2-1e-4")
    prc.add_argument("chapter")
    prc.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="e.g. fewer seeds than the profile's: the record is then labelled partial")
    prc.add_argument("--profile", default="paper", help="smoke, quick or paper (default: paper)")
    prc.add_argument("--workers", type=int, default=1,
                     help="processes: first run the chapter once per item of a list parameter in parallel "
                          "(filling the model cache), then in full from the cache")
    prc.add_argument("--split", metavar="NAME", help="the list parameter to split on (default: the first "
                                                      "with two or more items, e.g. layers)")
    prc.add_argument("--until-decided", action="store_true",
                     help="add seeds in the declared stages until every finding decides (Bonferroni over "
                          "the looks)")
    prc.add_argument("--max-seeds", type=positive, metavar="N", help="with --until-decided: the last stage")
    prc.add_argument("--stages", type=_stages, default=(5, 10, 20, 40), metavar="5,10,20,40",
                     help="with --until-decided: n_seeds of each look, declared before the run")
    prc.add_argument("--dry-run", action="store_true",
                     help="list the networks the record would train first (estimated cost) and stop")
    prc.add_argument("--deviation", metavar="NAME",
                     help="the -p settings replace the authors' with ours: keep the record apart, as "
                          "results/PROFILE/deviations/CHAPTER.NAME.json, out of every count of verdicts")
    prc.set_defaults(func=_record)
    pv = add("verify", "re-run a recorded chapter with its recorded parameters and compare", "t-d1",
             "tab-accuracy --deviation l2-1e-4")
    pv.add_argument("chapter")
    pv.add_argument("--profile", default="paper")
    pv.add_argument("--deviation", metavar="NAME", help="verify this deviation record of the chapter")
    pv.set_defaults(func=_verify)
    ps = add("scorecard", "every recorded claim with its status", "", "--profile paper --json")
    ps.add_argument("--json", action="store_true")
    ps.add_argument("--profile")
    ps.set_defaults(func=_scorecard)
    pp = add("plan", "for each undecided finding: which way it leans, the seeds that would decide it and "
             "their cost", "", "t-d1 --json", "--profile quick")
    pp.add_argument("chapter", nargs="?")
    pp.add_argument("--json", action="store_true")
    pp.add_argument("--profile", default="paper", choices=("paper", "quick"),
                    help="paper: the recorded runs (results/paper); quick: the claims store")
    pp.set_defaults(func=_plan)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        rc = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, where it is caught, not at exit
        return rc
    except SystemExit:
        _flush_or_quiet()
        raise
    except BrokenPipeError:
        # The reader went away (`companion list | head -1`): what it read is what it wanted.
        _quiet_stdout()
        return 0
    except (config.ConfigError, parallel.ClusterError) as exc:
        print(f"companion: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # papermill execution errors and the like
        name = type(exc).__name__
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(f"companion: {name}: {first}", file=sys.stderr)
        return 1


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit meets no closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _flush_or_quiet() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()


if __name__ == "__main__":
    sys.exit(main())
