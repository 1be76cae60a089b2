"""Kernel-side half of the prime-agent-kernel package.

Stable import for code running in the kernel::

    from prime_kernel import host_request
    reply = await host_request("some.type", {"key": "value"})

The kernel is started with ``python prime_kernel_launch.py -f <connection file>`` (see
``__main__``), which
runs a stock ipykernel with two additions: the process exits when its host process is gone, and
host replies are accepted on the control channel.
"""

from .host_request import HOST_REQUEST_TARGET, HostRequestTimeout, HostRequestUnavailable, host_request, notify_host

__all__ = ["HOST_REQUEST_TARGET", "HostRequestTimeout", "HostRequestUnavailable", "host_request", "notify_host"]
