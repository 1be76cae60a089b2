"""Make a kernel started by someone else (a Jupyter Server's stock ``python3``) a prime kernel.

``__main__`` installs these parts before the kernel starts; a kernel on a server was started by
the server, so the host runs ``attach()`` in its first (silent) cell instead: host replies and
output acknowledgements on control, bounded and accounted stream output, capped results and
errors, no output history, interrupts that reach an awaiting cell, and the heartbeat watcher
that ends the kernel when its host is gone. A kernel launched by our own kernelspec
(``prime-agent kernelspec install``) already has the parts; only the watcher is started.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

from . import control, heartbeat


def bound_output() -> None:
    """Cuts and paces the standard streams (see ``output_chunks``); the host runs it in the cell
    after ``attach()``: IPython puts back, when a cell ends, the ``write`` it found when the cell
    began, so streams bounded inside the attaching cell would be unbounded again. Once."""
    global _bounded
    if _bounded:
        return
    _bounded = True
    from .output_chunks import bound_standard_streams

    bound_standard_streams()


_bounded = False


def attach(heartbeat_timeout_s: float | None = None, cleanup_dir: str | None = None) -> dict[str, Any]:
    from ipykernel.kernelapp import IPKernelApp

    global _bounded
    app = IPKernelApp.instance()
    kernel = app.kernel
    if control.current_kernel() is not None:
        _bounded = True  # launched by our kernelspec: ``__main__`` bounded the streams already
    else:
        from . import state  # noqa: F401  (what a state save imports, as at launch)
        from .output_caps import cap_published_output, keep_no_output_history
        from .output_chunks import account_published_output, exempt_kernel_threads
        from .signal_wakeup import install_signal_wakeup

        control.install_control_handler(kernel)
        account_published_output(kernel)
        cap_published_output(kernel)
        keep_no_output_history(kernel.shell)
        _plain_tracebacks(kernel.shell)
        exempt_kernel_threads(kernel)
        install_signal_wakeup()
    if heartbeat_timeout_s:
        heartbeat.watch(heartbeat_timeout_s, cleanup_dir, getattr(app, "abs_connection_file", None) or getattr(app, "connection_file", None) or None)
    return {
        "hostname": socket.gethostname(),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "python": sys.executable,
        # Where this kernel saves what it cuts from large errors, results and displays.
        "output_dir": os.environ.get("PRIME_KERNEL_OUTPUT_DIR", ""),
    }


def _plain_tracebacks(shell: Any) -> None:
    """Tracebacks without colour codes, as a local kernel's (launched with ``colors=nocolor``)."""
    try:
        shell.run_line_magic("colors", "nocolor")
    except Exception:  # noqa: BLE001  (an IPython without the scheme keeps its colours)
        pass
