"""A driver program for launcher tests: prints a line and exits with the code it is given.

``exit_with.py CODE [WAIT_FOR_FILE]``: with a second argument, it first waits (at most two
minutes) until that file exists, so a test can watch it run and then let it end.
"""

import sys
import time
from pathlib import Path

code = int(sys.argv[1])
print(f"exit_with starting, will exit {code}", flush=True)
if len(sys.argv) > 2:
    release = Path(sys.argv[2])
    deadline = time.monotonic() + 120
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
print(f"exit_with exiting {code}", flush=True)
sys.exit(code)
