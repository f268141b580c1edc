"""The ``companion`` command: list chapters, run one with parameters, print the scorecard.

    companion list [--json]
    companion run CHAPTER [-p NAME VALUE]... [--profile P] [--output DIR]
    companion scorecard [--json] [--profile P]

Bad input (unknown chapter, parameter or value) prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from . import chapters, claims, config, runner


def _list(args) -> int:
    profile = config.active_profile(args.profile)
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
            }
        )
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"profile: {profile}")
    for r in rows:
        print(f"\n{r['id']:<16} {r['paper']}  {r['figure']}: {r['title']}")
        for name, default in r["parameters"].items():
            print(f"    {name:<14} = {default!r:<12} {r['allowed'][name]:<28} {r['help'][name]}")
    return 0


def _run(args) -> int:
    params: dict[str, str] = {}
    for name, value in args.param or []:
        params[name] = value
    # Validate first: errors raise ConfigError before anything is executed or written.
    runner.prepare(args.chapter, params, args.profile)
    out_nb, recorded = runner.run(args.chapter, params, args.profile, args.output)
    print(f"executed {args.chapter} -> {out_nb}")
    if recorded:
        frame = claims.to_frame(recorded)
        n = int(frame["passed"].sum())
        print(f"{n} of {len(frame)} claims pass\n")
        print(frame[["id", "expected", "observed", "criterion", "status"]].to_string(index=False))
    else:
        print("this chapter recorded no claims")
    return 0


def _scorecard(args) -> int:
    profile = config.active_profile(args.profile)
    frame, missing = claims.scorecard(profile)
    if args.json:
        rows = frame.drop(columns=["status"]).to_dict(orient="records")
        out = [
            {
                "chapter": r["chapter"],
                "paper": claims._paper_of(r["chapter"]),
                "figure": r["figure"],
                "id": r["id"],
                "claim": r["claim"],
                "expected": r["expected"],
                "observed": r["observed"],
                "criterion": r["criterion"],
                "passed": bool(r["passed"]),
                "profile": r["profile"],
            }
            for r in rows
        ]
        print(json.dumps(out, indent=1))
        return 0
    n = int(frame["passed"].sum()) if len(frame) else 0
    print(f"profile: {profile}   {n} of {len(frame)} claims pass")
    if len(frame):
        print(frame[["chapter", "figure", "id", "observed", "status"]].to_string(index=False))
    if missing:
        print(f"\nno claims stored yet for: {', '.join(missing)} (run them, or build the book)")
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's own convention)
        self.exit(2, f"companion: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="companion", description="Run and inspect the attention-companion chapters.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    pl = sub.add_parser("list", help="every chapter with its paper, figure and parameters")
    pl.add_argument("--json", action="store_true")
    pl.add_argument("--profile", help="show the defaults of this profile")
    pl.set_defaults(func=_list)
    pr = sub.add_parser("run", help="execute a chapter with papermill and print its claims")
    pr.add_argument("chapter")
    pr.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    pr.add_argument("--profile", help="smoke, quick or paper")
    pr.add_argument("--output", default="companion-runs", help="folder for the executed notebook")
    pr.set_defaults(func=_run)
    ps = sub.add_parser("scorecard", help="every recorded claim with its status")
    ps.add_argument("--json", action="store_true")
    ps.add_argument("--profile")
    ps.set_defaults(func=_scorecard)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except config.ConfigError as exc:
        print(f"companion: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # papermill execution errors and the like
        name = type(exc).__name__
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(f"companion: {name}: {first}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
