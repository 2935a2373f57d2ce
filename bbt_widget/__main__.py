"""``python -m bbt_widget``: same as the ``bbt-widget`` command."""

import sys

from .cli import main

sys.exit(main())
