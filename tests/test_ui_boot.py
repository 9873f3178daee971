"""Importing explorer.ui changes nothing of the process it is imported into; ui.boot, called by app.py and
serve.py, is where the server's process is set up (torch's threads, the widget gate)."""
import subprocess
import sys

IMPORT_ONLY = """
import threading, torch
torch.set_num_threads(3)
from streamlit.runtime.app_session import AppSession
before_threads, before_handler = set(threading.enumerate()), AppSession.handle_backmsg
import explorer.ui
print(torch.get_num_threads(), sorted(t.name for t in set(threading.enumerate()) - before_threads),
      AppSession.handle_backmsg is before_handler)
explorer.ui.boot()
print(torch.get_num_threads(), AppSession.handle_backmsg is before_handler)
"""


def test_importing_the_ui_starts_no_thread_and_keeps_torch_threads():
    out = subprocess.run([sys.executable, "-c", IMPORT_ONLY], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "HEAD_EXPLORER_TORCH_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    imported, booted = out.stdout.strip().splitlines()[-2:]
    assert imported == "3 [] True"  # the import: threads as the process set them, no new thread, no patch
    assert booted == "1 False"  # boot: the configured threads and the gate installed (the check is not vacuous)
