#!/usr/bin/env python3
"""Generated blocks of README.md and docs/*.md from the committed results: --update rewrites
them, --check exits 1 when one is stale (plots/convplots/docs.py); --lint checks that no number
with a unit stands outside them (plots/convplots/lint.py), --lint-self-test that the lint
catches a planted stale number. Needs python3 only."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

from convplots import docs, lint  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(lint.main(args) if args in (["--lint"], ["--lint-self-test"]) else docs.main(args))
