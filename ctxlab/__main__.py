"""`python -m ctxlab` is the `ctxlab` command."""

from ctxlab.cli import main

raise SystemExit(main())
