"""``python -m audit.cli``: the ``audit`` command."""
import sys

from audit.cli.main import main

sys.exit(main())
