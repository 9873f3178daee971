"""`train-sentiment`: rebuild the embedded sentiment head asset."""
from __future__ import annotations

from explorer.cli.common import SEED, bounded, quiet_transformers


def add_parser(sub) -> None:
    t = sub.add_parser("train-sentiment", help="rebuild the embedded sentiment head asset")
    t.add_argument("--epochs", type=bounded(int, 1, 10_000), default=30)
    t.add_argument("--seed", type=SEED, default=0)
    t.set_defaults(func=run)


def run(args) -> int:
    from explorer.results import strict_json
    from explorer.train.sentiment import train

    quiet_transformers()
    print(strict_json(train(epochs=args.epochs, seed=args.seed)))
    return 0
