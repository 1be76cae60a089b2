import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { KernelStartError } from "../kernel/errors.js";

/** What the host sends at most to a kernel on a server (the Python folders it needs there). */
const MAX_RUNTIME_BYTES = 16 * 1024 * 1024;
/** Files a folder sent to the server never needs. */
const SKIPPED = /(^|\/)(__pycache__|\.[^/]*)(\/|$)|\.pyc$/;

/** What `attach()` answers: where the kernel really runs. */
export interface AttachedKernel {
	hostname: string;
	cwd: string;
	pid: number;
	python: string;
	/** The folder on the kernel's machine where it saves what it cuts from large outputs. */
	output_dir?: string;
}

/** The line the bootstrap cell prints its answer after (so other output cannot be taken for it). */
export const ATTACHED_PREFIX = "prime-kernel-attached:";

/**
 * The first cell a kernel on a server runs: it writes `folders` (the kernel package's Python and
 * the `pythonPath` folders, every file but caches and dotfiles) to a private temp folder there,
 * puts them first on `sys.path` in order, sets `env`, and attaches (see `attach.py`). The folder
 * is removed when the kernel exits or its heartbeat watcher ends it; one left by a kernel that
 * crashed (its pid is in the name) is removed by the next kernel that starts there.
 */
export function bootstrapCode(options: {
	folders: string[];
	env: Record<string, string>;
	hostGoneAfterS: number;
}): string {
	let total = 0;
	const trees = options.folders.map((folder) => {
		const files: Record<string, string> = {};
		for (const path of listFiles(folder)) {
			const data = readFileSync(path);
			total += data.length;
			if (total > MAX_RUNTIME_BYTES) {
				throw new KernelStartError(
					`The Python folders to send to the kernel's server exceed ${MAX_RUNTIME_BYTES / 1024 / 1024} MB (at ${path}); install large packages on the server instead of passing them in pythonPath.`,
				);
			}
			files[relative(folder, path).split(sep).join("/")] = data.toString("base64");
		}
		return files;
	});
	const payload = JSON.stringify({ trees, env: options.env, timeout: options.hostGoneAfterS });
	return `def __prime_bootstrap(payload):
    import atexit, base64, json, os, shutil, sys, tempfile
    spec = json.loads(payload)
    # Runtime folders of kernels that died without cleaning up (a crash, SIGKILL) go first.
    for stale in os.listdir(tempfile.gettempdir()):
        parts = stale.split("-")
        if stale.startswith("prime-remote-kernel-") and len(parts) > 3 and parts[3].isdigit():
            try:
                os.kill(int(parts[3]), 0)
            except ProcessLookupError:
                shutil.rmtree(os.path.join(tempfile.gettempdir(), stale), True)
            except OSError:
                pass
    root = tempfile.mkdtemp(prefix=f"prime-remote-kernel-{os.getpid()}-")
    atexit.register(shutil.rmtree, root, True)
    folders = []
    for index, files in enumerate(spec["trees"]):
        base = os.path.join(root, str(index))
        for name, data in files.items():
            path = os.path.join(base, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as out:
                out.write(base64.b64decode(data))
        folders.append(base)
    sys.path[0:0] = folders
    os.environ.update(spec["env"])
    os.environ.setdefault("PRIME_KERNEL_OUTPUT_DIR", os.path.join(root, "outputs"))
    from prime_kernel.attach import attach
    return attach(heartbeat_timeout_s=spec["timeout"], cleanup_dir=root)
print(${JSON.stringify(ATTACHED_PREFIX)} + __import__("json").dumps(__prime_bootstrap(${JSON.stringify(payload)})))
del __prime_bootstrap
`;
}

/** The answer printed by the bootstrap cell, or undefined when its output has none. */
export function parseAttached(stdout: string): AttachedKernel | undefined {
	const line = stdout
		.split("\n")
		.reverse()
		.find((candidate) => candidate.startsWith(ATTACHED_PREFIX));
	if (!line) return undefined;
	try {
		const value = JSON.parse(line.slice(ATTACHED_PREFIX.length)) as AttachedKernel;
		return typeof value.hostname === "string" && typeof value.cwd === "string" ? value : undefined;
	} catch {
		return undefined;
	}
}

function listFiles(folder: string): string[] {
	let entries: string[];
	try {
		entries = readdirSync(folder, { recursive: true, encoding: "utf8" });
	} catch (error) {
		throw new KernelStartError(
			`Cannot read the Python folder ${folder} to send to the kernel's server: ${String(error)}`,
		);
	}
	return entries
		.filter((name) => !SKIPPED.test(name.split(sep).join("/")))
		.map((name) => join(folder, name))
		.filter((path) => statSync(path).isFile())
		.sort();
}
