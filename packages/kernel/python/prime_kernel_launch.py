"""Starts the kernel: ``python prime_kernel_launch.py -f <connection file> [ipykernel args]``.

Run as a script from this folder (not ``python -m prime_kernel``), so ``sys.path[0]`` is this
folder rather than the directory the kernel runs in: nothing is imported from a project while the
kernel starts (see ``prime_kernel.project_path``, which adds the project folder for cells after).
"""

from prime_kernel.__main__ import main

if __name__ == "__main__":
    main()
