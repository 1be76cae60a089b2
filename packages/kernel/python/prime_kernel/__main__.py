"""Launch an IPython kernel for a host process: ``python -m prime_kernel -f <connection file> [ipykernel args]``.

``PRIME_KERNEL_HOST_PID`` names the host process; the kernel exits (with its process group) once it
is gone, so a host killed with SIGKILL leaves no kernel behind.
"""

import os
import sys

from .control import install_control_handler
from .output_chunks import bound_standard_streams
from .parent_watch import watch_host


def main() -> None:
    host_pid = os.environ.get("PRIME_KERNEL_HOST_PID", "")
    if host_pid.isdigit():
        # Started before ipykernel initialises, so a host that dies during startup is noticed too.
        watch_host(int(host_pid))

    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(sys.argv[1:])
    install_control_handler(app.kernel)
    bound_standard_streams()
    app.start()


if __name__ == "__main__":
    main()
