"""`config`: the settings as the environment gives them (every HEAD_EXPLORER_* variable, its value, its meaning)."""
from __future__ import annotations


def add_parser(sub) -> None:
    c = sub.add_parser("config", help="print the settings read from HEAD_EXPLORER_* environment variables",
                       description="Every HEAD_EXPLORER_* variable with the value this process reads (its default "
                                   "when unset) and what it bounds; a value that cannot be read is one line, exit 2.")
    c.add_argument("--json", action="store_true", help="print one JSON object: variable -> value")
    c.set_defaults(func=run)


def run(args) -> int:
    from explorer.results import strict_json
    from explorer.runtime.config import env_config

    rows = env_config().rows()
    if args.json:
        print(strict_json({name: value for name, value, _ in rows}))
        return 0
    width = max(len(name) for name, _, _ in rows)
    for name, value, doc in rows:
        print(f"{name:<{width}}  {value or '(unset)':<10}  {doc}")
    return 0
