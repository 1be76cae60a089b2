import { spawn } from "node:child_process";
import { KernelSetupError, SETUP_HINT } from "./errors.js";
import { resolveKernelPython } from "./resolve-python.js";
import { pinnedRequirements } from "./setup-environment.js";

/** Modules the kernel process imports as it starts: ipykernel, the zmq it talks over, dill for saved state. */
export const KERNEL_MODULES = ["zmq", "ipykernel", "dill"] as const;

/**
 * Looks the modules up by name without importing them: one Python start-up, not the seconds importing
 * ipykernel takes. `-c` puts the working directory (a repository) first on sys.path as `''` (an empty
 * PYTHONPATH entry adds it too): it is dropped first, so a project's `zmq.py` neither runs nor
 * passes for the real module, as the kernel never takes it either.
 */
const PROBE =
	"import os, sys\nsys.path = [p for p in sys.path if p not in ('', os.getcwd())]\nimport importlib.util as u\n" +
	"print(' '.join(m for m in sys.argv[1:] if u.find_spec(m) is None) or '-')";

/** A probe that takes longer than this is a hung interpreter, not a slow machine. */
const PROBE_TIMEOUT_MS = 60_000;

/** What is wrong with a kernel interpreter, and what to do about it. */
export interface KernelPythonProblem {
	problem: string;
	fix: string;
}

/**
 * Why `python` cannot run the kernel, or undefined when it can: it does not run, or it lacks one of
 * KERNEL_MODULES. `fromEnv` says the interpreter came from PRIME_AGENT_KERNEL_PYTHON (the fix then
 * differs: install into it or unset the variable). Never rejects: a caller may start this early and
 * await it after other checks.
 */
export async function kernelPythonProblem(python: string, fromEnv: boolean): Promise<KernelPythonProblem | undefined> {
	const probe = await run(python, ["-c", PROBE, ...KERNEL_MODULES]);
	const which = fromEnv ? `PRIME_AGENT_KERNEL_PYTHON is set to ${python}, which` : `The kernel interpreter ${python}`;
	if (probe.code !== 0 || !probe.stdout.trim()) {
		const why = probe.spawnError
			? `cannot be run (${probe.spawnError.code ?? probe.spawnError.message})`
			: `fails to run a Python script (${probe.code === null ? "it did not finish" : `exit code ${probe.code}`})`;
		const output = probe.stderr.trim() ? ` Its output:\n${probe.stderr.trim().slice(-2000)}\n` : "";
		return {
			problem: `${which} ${why}.${output}`,
			fix: `${fromEnv ? "Fix or unset the variable. " : ""}${SETUP_HINT}`,
		};
	}
	const missing = probe.stdout.trim().split("\n").pop()?.trim();
	if (!missing || missing === "-") return undefined;
	const problem = `${which} lacks the Python modules the kernel needs: ${missing.split(" ").join(", ")}.`;
	if (!fromEnv) {
		return {
			problem,
			fix: "Repair its environment with `npm run setup` in a checkout of the repository, or `prime-agent setup` for an installed agent.",
		};
	}
	const pins = [...(await pinnedRequirements())].map(([name, version]) => `${name}==${version}`).join(" ");
	return {
		problem,
		fix:
			`Install them into it (\`${python} -m pip install ${pins}\`), or unset PRIME_AGENT_KERNEL_PYTHON ` +
			"to use the kernel environment that `npm run setup` (or `prime-agent setup`) creates.",
	};
}

/** Interpreters found able to run the kernel: not probed again in this process (sub-agents, a switched session). */
const healthy = new Set<string>();

/**
 * The kernel interpreter (see resolveKernelPython), checked to run and to have KERNEL_MODULES.
 * Rejects with KernelSetupError saying what is missing, in which interpreter, and what to do.
 */
export async function requireKernelPython(env: NodeJS.ProcessEnv = process.env): Promise<string> {
	const python = resolveKernelPython(env);
	if (healthy.has(python)) return python;
	const found = await kernelPythonProblem(python, Boolean(env.PRIME_AGENT_KERNEL_PYTHON));
	if (found) throw new KernelSetupError(`${found.problem} ${found.fix}`);
	healthy.add(python);
	return python;
}

interface ProbeRun {
	code: number | null;
	stdout: string;
	stderr: string;
	spawnError?: NodeJS.ErrnoException;
}

function run(command: string, args: string[]): Promise<ProbeRun> {
	return new Promise((resolve) => {
		const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], timeout: PROBE_TIMEOUT_MS });
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (chunk) => {
			stdout = (stdout + chunk).slice(-4096);
		});
		child.stderr.on("data", (chunk) => {
			stderr = (stderr + chunk).slice(-4096);
		});
		child.once("error", (spawnError: NodeJS.ErrnoException) => resolve({ code: null, stdout, stderr, spawnError }));
		child.once("close", (code) => resolve({ code, stdout, stderr }));
	});
}
