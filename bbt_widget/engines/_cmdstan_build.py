"""Compile a Stan program into a CmdStan executable (run as a script, not imported).

Usage: ``python _cmdstan_build.py PROGRAM.stan [INCLUDE_DIR]``; the executable is written beside
the program, and stanc resolves its ``#include`` lines in ``INCLUDE_DIR``.

The cmdstanpy engine runs this in a subprocess (a process group of its own) with a scratch
working directory and its output captured; cmdstanpy runs CmdStan's ``make``.
"""

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same module, as the type checker finds it in the package
    from bbt_widget.engines._orphans import watch_parent
else:  # beside this script, which runs as `python <path>`
    from _orphans import watch_parent


def main() -> None:
    stan_file = sys.argv[1]
    # If the engine's process dies (SIGTERM, SIGKILL), stop make and the compiler (our process
    # group) and remove our scratch folders.
    watch_parent([os.getcwd(), os.path.dirname(os.path.abspath(stan_file))])

    import cmdstanpy

    options = {"include-paths": [sys.argv[2]]} if len(sys.argv) > 2 else None
    model = cmdstanpy.CmdStanModel(stan_file=stan_file, stanc_options=options)
    print("built", model.exe_file)


if __name__ == "__main__":
    main()
