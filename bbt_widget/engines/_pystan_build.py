"""Compile a Stan program into an httpstan extension module (run as a script, not imported).

Usage: ``python _pystan_build.py PROGRAM.stan TARGET_DIR [COMPILE_ARGS_JSON]``

The PyStan engine runs this in a subprocess whose working directory is a scratch directory
(setuptools leaves a ``build/`` folder in the cwd) and whose output it captures (the compiler is
noisy, and httpstan redirects the process's stderr while compiling). It uses httpstan's own
build function, pointed at our cache directory instead of httpstan's.
"""

import asyncio
import importlib.util
import json
import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same module, as the type checker finds it in the package
    from bbt_widget.engines._orphans import watch_parent
else:  # beside this script, which runs as `python <path>`
    from _orphans import watch_parent


def main() -> None:
    program_path, target = Path(sys.argv[1]), Path(sys.argv[2])
    # the compiler flags after Python's own CFLAGS (so they win): httpstan's defaults if absent
    compile_args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
    # If the engine's process dies (SIGTERM, SIGKILL), stop the compiler (our process group)
    # and remove our scratch folders: no cc1plus runs on, no bbt-widget-build-* stays behind.
    watch_parent([os.getcwd(), str(target)])
    program = program_path.read_text(encoding="utf-8")

    import httpstan.cache  # type: ignore[import-untyped, unused-ignore]
    import httpstan.models  # type: ignore[import-untyped, unused-ignore]

    httpstan.cache.model_directory = lambda model_name: target
    compiler_output = asyncio.run(
        httpstan.models.build_services_extension_module(program, compile_args)
    )
    (target / "compiler.log").write_text(compiler_output)

    # Smoke test: the module loads (catches link errors here, with the compiler output at hand,
    # instead of in the first fit).
    module_path = next(p for p in target.iterdir() if p.suffix in EXTENSION_SUFFIXES)
    spec = importlib.util.spec_from_file_location("stan_services", module_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python extension module: {module_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    print("built", module_path.name, "with", module.hmc_nuts_diag_e_adapt_wrapper.__name__)


if __name__ == "__main__":
    main()
