"""`python -m app.cli ...` (how the dashboard launches background runs, and `accelerate launch -m
app.cli train ...`): the same command line as the `judgeaudit` script."""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
