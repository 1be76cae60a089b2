import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { KERNEL_FLAGS, OUTPUT_WINDOW_CHARS, PYTHON_PACKAGE_DIR } from "../process/index.js";
import { KernelSetupError } from "./errors.js";
import { resolveKernelPython } from "./resolve-python.js";

export interface KernelspecOptions {
	/** The kernelspec's name (what `kernel.kernelName` names). Default `prime-agent`. */
	name?: string;
	/** What Jupyter shows for it. Default `Python (prime-agent)`. */
	displayName?: string;
	/** The interpreter the kernel runs with (it needs ipykernel). Default: the kernel's interpreter. */
	python?: string;
	/** Where kernelspecs go. Default `$JUPYTER_DATA_DIR/kernels`, else `~/.local/share/jupyter/kernels`. */
	kernelsDir?: string;
	/** Where `JUPYTER_DATA_DIR` and `HOME` are read. Default `process.env`. */
	env?: NodeJS.ProcessEnv;
	/** More Python folders for the kernel (the agent's kernel runtime), copied in with the kernel's own. */
	folders?: string[];
}

export interface InstalledKernelspec {
	/** The kernelspec's folder (`<kernelsDir>/<name>`). */
	path: string;
	name: string;
	python: string;
}

/** A kernelspec name: a folder of the kernels folder, so never `.` or `..`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Writes a kernelspec that launches prime-agent's kernel (the launcher, the output caps and flow
 * control, host replies on control, and the heartbeat tombstone that stops a server restarting a
 * kernel whose host is gone) for a Jupyter Server the user controls. The Python folders are copied
 * into the kernelspec's folder, so it keeps working when this checkout moves; the folder is
 * written aside and renamed into place, so a failed install leaves the previous one whole.
 */
export function installKernelspec(options: KernelspecOptions = {}): InstalledKernelspec {
	const name = options.name ?? "prime-agent";
	if (!NAME.test(name)) {
		throw new KernelSetupError(
			`${JSON.stringify(name)} cannot name a kernelspec: use letters, digits, ".", "_" or "-".`,
		);
	}
	const python = options.python ?? resolveKernelPython();
	const env = options.env ?? process.env;
	const kernelsDir =
		options.kernelsDir ??
		join(env.JUPYTER_DATA_DIR || join(env.HOME || homedir(), ".local", "share", "jupyter"), "kernels");
	const path = join(kernelsDir, name);
	const staging = `${path}.installing-${process.pid}`;
	rmSync(staging, { recursive: true, force: true });
	try {
		const folders = [PYTHON_PACKAGE_DIR, ...(options.folders ?? [])].map((folder, index) => {
			if (!existsSync(folder)) throw new KernelSetupError(`The Python folder ${folder} does not exist.`);
			const target = join(staging, "python", String(index));
			cpSync(folder, target, {
				recursive: true,
				filter: (source) => !/__pycache__|\.pyc$/.test(basename(source)),
			});
			return join(path, "python", String(index));
		});
		const spec = {
			argv: [python, join(folders[0], "prime_kernel_launch.py"), "-f", "{connection_file}", ...KERNEL_FLAGS],
			display_name: options.displayName ?? "Python (prime-agent)",
			language: "python",
			env: {
				PYTHONPATH: folders.join(":"),
				PYTHONUNBUFFERED: "1",
				PRIME_KERNEL_OUTPUT_WINDOW: String(OUTPUT_WINDOW_CHARS),
			},
			metadata: { debugger: false, prime_agent: { kernel: true } },
		};
		writeFileSync(join(staging, "kernel.json"), `${JSON.stringify(spec, null, 2)}\n`);
		mkdirSync(kernelsDir, { recursive: true });
		rmSync(path, { recursive: true, force: true });
		renameSync(staging, path);
	} catch (error) {
		rmSync(staging, { recursive: true, force: true });
		if (error instanceof KernelSetupError) throw error;
		throw new KernelSetupError(`Cannot write the kernelspec to ${path}: ${(error as Error).message}`);
	}
	return { path, name, python };
}
