"""``python -m compiler_bridge``: runs :func:`compiler_bridge.cli.main` (stats, extract,
passes, store, and the runtime commands: runtimes, profile, calibrate, train)."""

import sys

from .cli import main

sys.exit(main())
