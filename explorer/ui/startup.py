"""What the server's process does once, before its first page: the explicit start that app.py and serve.py
call (ui.boot), so that importing explorer.ui changes nothing of the process it is imported into."""
from __future__ import annotations

import threading

import torch

from explorer.runtime.config import env_config
from explorer.ui import cache, gate, report

_BOOTED = threading.Lock()  # held for good by the first boot: later calls (every app.py run) skip the settings


def boot() -> None:
    """Once per process, later calls do nothing: torch's intra-op threads (HEAD_EXPLORER_TORCH_THREADS, one by
    default, so a class's sessions share the cores instead of each forward taking them all), the reporter thread
    that loads the default model and logs the session count and memory (only inside a running server), and
    the check of every session's widget values against their limits (explorer/ui/gate.py)."""
    report.start(lambda name: cache.shared_checkpoint(name, 0))  # its own once, and only once a server runs
    if _BOOTED.acquire(blocking=False):
        torch.set_num_threads(env_config().torch_threads)
        gate.guard_reruns()
