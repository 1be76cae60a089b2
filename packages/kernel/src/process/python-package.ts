import { fileURLToPath } from "node:url";

/** Directory holding the `prime_kernel` Python package (put on the kernel's PYTHONPATH). */
export const PYTHON_PACKAGE_DIR = fileURLToPath(new URL("../../python", import.meta.url));
/** Pinned requirements of the kernel environment. */
export const REQUIREMENTS_FILE = fileURLToPath(new URL("../../python/requirements.txt", import.meta.url));
