"""What every benchmark records of the machine it ran on, beside its results."""

from __future__ import annotations

import os
import platform
import resource
from typing import Any


def machine(load: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """The platform, Python's version, the cores and the load average when the benchmark
    started (``load``, read now when not given): these machines are shared, and the load
    says how much the absolute times mean."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg() if load is None else load,
    }


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its ended children (Stan's chains run
    in worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
