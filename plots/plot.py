#!/usr/bin/env python3
"""Figures and a markdown report from convstudy sweep CSVs.

    plot.py RESULTS.csv [MORE.csv ...] --out DIR [--title-suffix TEXT]
    plot.py --compare A.csv B.csv --out DIR [--title-suffix TEXT]

Reads one or more CSVs written by `convstudy sweep` (columns: csv_columns() in
cli/results.cpp; README "CSV columns"), concatenated in order: a later row for the same
(device, layer, N, variant, memory, layout) replaces an earlier one. Writes PNG figures and
DIR/report.md with the reference study's tables, every table and figure stating the CSV
file(s), device and sweep date it came from. With --compare, draws run B against run A
(the ratio B/A with its spread, as `convstudy compare` judges it) and DIR/compare.md.

Everything comes from the data: variant names, families, precisions, layers, batch sizes,
memory modes. The only names the package knows are the `-uncoalesced` suffix (to pair a
variant with its uncoalesced twin) and the family `cudnn` (the anchor rows).

Conventions:
- Timing figures use PASS rows only; the report lists SKIP, FAIL and ERROR rows with reasons.
- A variant's "default" memory mode is pageable when it ran there, else the first of
  pinned, streams, managed-prefetch, managed (then any other) that it ran in. Per-variant
  figures use that mode; the breakdown figure and the tables show every mode a variant ran.
- "Main" batch sizes are those that at least half of the variants ran (the N = 1, 32, 128
  sweep); larger N that only a scaling sweep ran appear in the scaling figure and tables.
- Variants are ordered by family (in the order the data first shows them: the registry's
  order for a sweep), then by name; a family's ladder keeps the rows' own order.

The code lives in the package plots/convplots/ (one module per figure family). Needs
python3 with numpy and matplotlib only (csv module, no pandas). A figure whose data is
missing is skipped with a line on stdout; if one figure fails the others are still written
and the exit code is 1.
"""

import os
import sys

try:
    import numpy  # noqa: F401
    import matplotlib  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the machine
    sys.stderr.write(f"plot.py: cannot import numpy/matplotlib ({exc}).\n"
                     "Install them: apt-get install python3-matplotlib python3-numpy\n")
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

from convplots.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
