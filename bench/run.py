"""``make bench``: the packet-engine benchmark (bench/sim_bench.py) as a Markdown table."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["--markdown", *sys.argv[1:]]))
