"""The settings: every HEAD_EXPLORER_* environment variable, read into one frozen `Config`.

`env_config()` reads os.environ on each call and parses only when a variable changed (a cache keyed by the
raw values), so an operator's environment is read once and a test that sets a variable sees it at once.
A value that is not a whole number in range is one line (ConfigError), naming the variable; an unset or
empty variable takes its default. `head-explorer config` prints the table; the README's "Configuration" lists it.
"""
from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass, field

from explorer.text.errors import ExplorerError

PREFIX = "HEAD_EXPLORER_"


class ConfigError(ExplorerError):
    """A HEAD_EXPLORER_* variable that cannot be read; one line, meant for the operator."""


def _setting(default, doc: str, least: int | None = 1):
    """A field with its default, its one-line meaning (the README's table) and, for numbers, the least value."""
    return field(default=default, metadata={"doc": doc, "least": least})


@dataclass(frozen=True)
class Config:
    """Each field is the variable HEAD_EXPLORER_<FIELD NAME IN CAPITALS>."""
    batch_mb: int = _setting(256, "one request's forward batch (leave-one-out, faithfulness, attributions, dropout); "
                                  "unset on cuda: a quarter of the device's free memory")
    analyses_mb: int = _setting(512, "cached analyses and pages' results, all sessions together")
    features_mb: int = _setting(1024, "cached encoder features for head training, all datasets together")
    models_mb: int = _setting(1024, "fine-tuned models kept in memory, all sessions together")
    session_models: int = _setting(3, "fine-tuned models one session keeps")
    training: int = _setting(2, "background jobs (fine-tunes, audits, long attributions, what a page asks "
                                "about first) running at once")
    queue: int = _setting(8, "background jobs waiting for a slot")
    client_jobs: int = _setting(3, "background jobs one client address may have running or waiting (0: no cap); "
                                   "the address is the websocket's peer, so behind a proxy that does not pass "
                                   "X-Forwarded-For from 127.0.0.1 every visitor looks like the proxy: set 0 there",
                                least=0)
    job_nice: int = _setting(10, "added to a job thread's nice value (0: unchanged)", least=0)
    train_mb: int = _setting(3072, "a full fine-tune's memory, checked before it starts")
    train_tokens: int = _setting(4_000_000, "a fine-tune's work in token passes (rows x length x epochs; full "
                                            "mode x3), checked before it starts")
    session_mb: int = _setting(256, "what one session keeps (its pages' results and its state), oldest results "
                                    "evicted first; 30 sessions fit a 24 GB machine")
    new_weights_mb: int = _setting(512, "weights a checkpoint's files lack (drawn at random), checked before loading")
    cell_chars: int = _setting(100_000, "characters in one cell of a table (an uploaded CSV, a CLI --csv, a library "
                                         "DataFrame), checked as it is read")
    columns: int = _setting(1_000, "columns of a table, checked as it is read")
    labels: int = _setting(1_000, "distinct labels in a table's label column (the label report, the audit, "
                                  "fine-tuning), checked before any model runs")
    audit_work: int = _setting(100_000_000, "a label audit's or scan's work: rows x labels x folds, checked "
                                            "before it starts")
    json_mb: int = _setting(64, "each of a checkpoint's config.json, tokenizer.json, tokenizer_config.json and "
                                "shard index, checked before it is read")
    torch_threads: int = _setting(1, "torch intra-op threads per forward in the app")
    report_s: int = _setting(60, "seconds between the server's log lines on sessions and memory")
    device: str = _setting("auto", "the app's device: auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps",
                           least=None)
    roots: str = _setting("", "folders local checkpoints may be loaded from, separated by the OS path separator "
                              "(default: the embedded model and ./models)", least=None)
    cache: str = _setting("", "the one folder the app writes to (default: the user's cache folder)", least=None)
    health_token: str = _setting("", "a bearer token that shows /healthz's numbers to a request from elsewhere "
                                     "(default: none; loopback without a proxy sees them)", least=None)

    def rows(self) -> list[tuple[str, str, str]]:
        """(variable, value, meaning) per setting, in field order: what `head-explorer config` prints."""
        return [(env_name(f.name), str(getattr(self, f.name)), f.metadata["doc"]) for f in dataclasses.fields(self)]


def env_name(name: str) -> str:
    """The environment variable of field `name`."""
    return PREFIX + name.upper()


NAMES = tuple(env_name(f.name) for f in dataclasses.fields(Config))


def given(name: str) -> bool:
    """Whether the operator set field `name`'s variable (not empty): a default that depends on the machine
    (budget.batch_mb's on cuda) applies only where it is not."""
    return bool((os.environ.get(env_name(name)) or "").strip())


def env_config() -> Config:
    """The settings as the environment gives them now (parsed again only when a variable changed)."""
    return _parse(tuple(os.environ.get(name) for name in NAMES))


@functools.lru_cache(maxsize=8)
def _parse(raw: tuple[str | None, ...]) -> Config:
    values = {}
    for f, text in zip(dataclasses.fields(Config), raw):
        if text is None or not text.strip():
            continue
        least = f.metadata["least"]
        if least is None:
            values[f.name] = text
            continue
        try:
            number = int(text.strip())
        except ValueError:
            number = None
        if number is None or number < least:
            raise ConfigError("config_whole_number", env=env_name(f.name), value=text, least=least)
        values[f.name] = number
    return Config(**values)
