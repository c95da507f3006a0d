#!/usr/bin/env python3
"""Generated blocks of README.md and NOTES.md from the committed CSVs: --update rewrites them,
--check exits 1 when one is stale (plots/convplots/docs.py). Needs python3 only."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

from convplots.docs import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
