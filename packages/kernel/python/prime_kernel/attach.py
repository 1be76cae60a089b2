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


def attach(heartbeat_timeout_s: float | None = None, cleanup_dir: str | None = None) -> dict[str, Any]:
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    kernel = app.kernel
    if control.current_kernel() is None:
        from . import state  # noqa: F401  (what a state save imports, as at launch)
        from .output_caps import cap_published_output, keep_no_output_history
        from .output_chunks import account_published_output, bound_standard_streams, exempt_kernel_threads
        from .signal_wakeup import install_signal_wakeup

        control.install_control_handler(kernel)
        bound_standard_streams()
        account_published_output(kernel)
        cap_published_output(kernel)
        keep_no_output_history(kernel.shell)
        exempt_kernel_threads(kernel)
        install_signal_wakeup()
    if heartbeat_timeout_s:
        heartbeat.watch(heartbeat_timeout_s, cleanup_dir, getattr(app, "abs_connection_file", None) or getattr(app, "connection_file", None) or None)
    return {
        "hostname": socket.gethostname(),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "python": sys.executable,
    }
