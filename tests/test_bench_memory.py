"""Big transcripts in bounded memory (issue 32, part 2), measured in subprocesses (VmHWM).

* A 100 MB line (a pasted log in a markdown transcript) is compacted by a real ``scribed
  run-once`` within 300 MB: the line is read in 8 MiB windows and its turn keeps only what a
  turn keeps (f2b29dd: 533 MB).
* A 64 MB markdown session is read (the compact loop's reading: its briefs, then its sessions)
  within 200 MB: only the turns it keeps are held (f2b29dd: the reading alone passed 400 MB).

* A 64 MB Squad REPL file (three agents: the default session holds every message, text with a
  non-Latin-1 character held at two bytes a character) is compacted by a real ``scribed
  run-once`` within 200 MB: read a session per pass, one session alive at a time, its raw texts
  given up at the door, freed long texts' pages returned (fe3005e: 212 MB).

The other formats' whole compaction is measured by ``bench/memory.py`` (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import memory  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM"),
]

_READ_CHILD = """
import sys
from pathlib import Path
from scribed import sources
kind, path = sys.argv[1], Path(sys.argv[2])
reading = sources.read_file(kind, path, "data")
turns = sum(len(s.turns) for s in reading.sessions())
hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0].split()[1]
print(turns, int(hwm) / 1024)
"""


def test_a_hundred_megabyte_line_is_compacted_within_300_mb(tmp_path: Path) -> None:
    row = memory.measure("markdown-line", 100, tmp_path)
    assert row["compacted"] == 1
    assert row["peak_rss_mb"] <= 300, row


def test_a_64_mb_markdown_transcript_is_read_within_200_mb(tmp_path: Path) -> None:
    fmt = "markdown"
    made = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "memory.py"), "--make", fmt, "64", str(tmp_path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    path = Path(made.stdout.strip())
    assert path.stat().st_size > 60e6
    out = subprocess.run(
        [sys.executable, "-c", _READ_CHILD, fmt, str(path)], capture_output=True, text=True, check=True
    )
    turns, peak = out.stdout.split()
    assert int(turns) > 1000
    assert float(peak) <= 200, json.dumps({"format": fmt, "peak_mb": peak})


def test_a_64_mb_squad_repl_file_is_compacted_within_200_mb(tmp_path: Path) -> None:
    row = memory.measure("squad-repl", 54, tmp_path)  # 54 MB of messages' text: a 64.3 MB file
    assert row["mb"] >= 64, row
    assert row["compacted"] == 3, row
    assert row["peak_rss_mb"] <= 200, row
