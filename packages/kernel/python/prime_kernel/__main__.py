"""Launch an IPython kernel for a host process (``prime_kernel_launch.py -f <connection file> [args]``).

``PRIME_KERNEL_HOST_PID`` names the host process; the kernel's process group is killed once the
host or the kernel is gone, so a host killed with SIGKILL leaves no kernel behind, and a kernel
that crashes leaves none of its subprocesses behind (see ``parent_watch``).
"""

from __future__ import annotations

import os
import sys

from .control import install_control_handler
from .heartbeat import host_gone_before
from .output_caps import cap_published_output, keep_no_output_history
from .output_chunks import account_published_output, bound_standard_streams, exempt_kernel_threads
from .parent_watch import start_guard
from .private_pipe import keep_subprocess_pipe_private, subprocess_pipe_address
from .project_path import add_project_folder
from .signal_wakeup import install_signal_wakeup


def _connection_file(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg == "-f" and i + 1 < len(args):
            return os.path.abspath(args[i + 1])
        if arg.startswith("--f="):
            return os.path.abspath(arg[4:])
    return None


def main() -> None:
    connection_file = _connection_file(sys.argv[1:])
    if host_gone_before(connection_file):
        # A server restarting a kernel whose host was gone: refuse, so it stops trying (heartbeat).
        sys.exit(0)
    host_pid = os.environ.get("PRIME_KERNEL_HOST_PID", "")
    if host_pid.isdigit():
        # Started before ipykernel initialises (and its threads), so a host that dies during
        # startup is noticed too.
        start_guard(int(host_pid), connection_file)
    pipe_address = subprocess_pipe_address(connection_file)
    if pipe_address:
        keep_subprocess_pipe_private(pipe_address)

    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    # The project folder is added after startup, last (see project_path), not first by IPython.
    app.initialize([*sys.argv[1:], "--IPKernelApp.ignore_cwd=True"])
    # What a state save imports (dill), imported while the project folder is not on sys.path; only
    # now, since dill keeps the `__main__` it finds, which IPython has just made the user's module.
    from . import state  # noqa: F401
    install_control_handler(app.kernel)
    bound_standard_streams()
    account_published_output(app.kernel)
    cap_published_output(app.kernel)
    keep_no_output_history(app.kernel.shell)
    from tornado.ioloop import IOLoop

    def on_loop_running() -> None:
        # Both need what exists only once the kernel runs: its threads and its event loop.
        exempt_kernel_threads(app.kernel)
        install_signal_wakeup()
        # Startup is done: from now on the project folder is there for cells.
        add_project_folder()

    IOLoop.current().add_callback(on_loop_running)
    app.start()


if __name__ == "__main__":
    main()
