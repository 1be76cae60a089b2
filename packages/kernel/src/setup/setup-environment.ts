import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile } from "node:fs/promises";
import { REQUIREMENTS_FILE } from "../process/python-package.js";
import { KernelSetupError } from "./errors.js";
import { agentDir as defaultAgentDir, kernelVenvDir, venvPython } from "./locations.js";

export interface SetupOptions {
	/** Root of the agent's state. Default: `PRIME_AGENT_DIR`, else `~/.prime/agent`. */
	agentDir?: string;
	/** Receives progress lines. */
	log?: (line: string) => void;
	/** Environment read for PRIME_AGENT_DIR, PRIME_AGENT_SETUP_PYTHON and PRIME_AGENT_PIP_ARGS. */
	env?: NodeJS.ProcessEnv;
}

interface RunResult {
	code: number | null;
	output: string;
	spawnError?: NodeJS.ErrnoException;
}

/**
 * Runs `python` in isolated mode (`-I`): setup is often run inside a repository, and plain `-c` or
 * `-m` would put that folder first on sys.path, so its `json.py` or `pip.py` would run. `-I` also
 * leaves out the user's site-packages and PYTHON* variables, which have no say in the venv either.
 */
function runPython(python: string, args: string[], onLine?: (line: string) => void): Promise<RunResult> {
	return new Promise((resolve) => {
		const child = spawn(python, ["-I", ...args], { stdio: ["ignore", "pipe", "pipe"] });
		let output = "";
		let pending = "";
		const take = (chunk: Buffer) => {
			const text = chunk.toString("utf8");
			output = (output + text).slice(-16_384);
			if (!onLine) return;
			pending += text;
			const lines = pending.split(/\r?\n/);
			pending = lines.pop() ?? "";
			for (const line of lines) if (line.trim()) onLine(line);
		};
		child.stdout.on("data", take);
		child.stderr.on("data", take);
		child.once("error", (spawnError: NodeJS.ErrnoException) => resolve({ code: null, output, spawnError }));
		child.once("close", (code) => {
			if (onLine && pending.trim()) onLine(pending);
			resolve({ code, output });
		});
	});
}

/** `name==version` pins of the requirements file. */
export async function pinnedRequirements(): Promise<Map<string, string>> {
	const pins = new Map<string, string>();
	for (const line of (await readFile(REQUIREMENTS_FILE, "utf8")).split("\n")) {
		const match = /^\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s#;]+)/.exec(line);
		if (match) pins.set(match[1], match[2]);
	}
	return pins;
}

/** Whether `python` runs and has exactly the pinned versions installed. */
async function hasPinnedVersions(python: string, pins: Map<string, string>): Promise<boolean> {
	const script =
		"import json, sys, importlib.metadata as m\n" +
		"out = {}\n" +
		"for name in sys.argv[1:]:\n" +
		"    try: out[name] = m.version(name)\n" +
		"    except m.PackageNotFoundError: out[name] = None\n" +
		"print(json.dumps(out))";
	const result = await runPython(python, ["-c", script, ...pins.keys()]);
	if (result.code !== 0) return false;
	try {
		const found = JSON.parse(result.output.trim().split("\n").pop() ?? "{}") as Record<string, string | null>;
		return [...pins].every(([name, version]) => found[name] === version);
	} catch {
		return false;
	}
}

/**
 * Creates (or repairs) the kernel venv at `<agent dir>/kernel-venv` and installs the pinned
 * requirements with `pip install --retries 0 --timeout 3` (`PRIME_AGENT_PIP_ARGS` adds flags; pip
 * lets a later flag override an earlier one). Idempotent: a venv that already has the pinned
 * versions is reused after one quick check. Throws KernelSetupError saying what failed and what to do.
 */
export async function setupKernelEnvironment(
	options: SetupOptions = {},
): Promise<{ python: string; created: boolean }> {
	const env = options.env ?? process.env;
	const log = options.log ?? (() => {});
	const dir = options.agentDir ?? defaultAgentDir(env);
	const venv = kernelVenvDir(dir);
	const python = venvPython(venv);
	const pins = await pinnedRequirements();
	const pinText = [...pins].map(([name, version]) => `${name}==${version}`).join(", ");

	if (existsSync(python) && (await hasPinnedVersions(python, pins))) {
		log(`Kernel environment is ready: ${venv} (${pinText})`);
		return { python, created: false };
	}

	await mkdir(dir, { recursive: true, mode: 0o700 });
	let created = false;
	if (!existsSync(python)) {
		const basePython = env.PRIME_AGENT_SETUP_PYTHON || "python3";
		log(`Creating the kernel environment with ${basePython} -m venv ${venv}`);
		const made = await runPython(basePython, ["-m", "venv", venv]);
		if (made.spawnError) {
			throw new KernelSetupError(
				`Cannot run ${basePython} (${made.spawnError.code ?? made.spawnError.message}). Install Python 3.10 or newer, ` +
					"or set PRIME_AGENT_SETUP_PYTHON to a Python 3 interpreter, then run setup again.",
			);
		}
		if (made.code !== 0) {
			const noEnsurepip = /ensurepip|python3(\.\d+)?-venv/.test(made.output);
			throw new KernelSetupError(
				`Creating the venv at ${venv} failed (${basePython} -m venv exited with code ${made.code}).\n${made.output.trim()}\n` +
					(noEnsurepip
						? "Install the venv module (for example `apt install python3-venv`), then run setup again."
						: "Fix the problem above (or remove the folder), then run setup again."),
			);
		}
		await chmod(venv, 0o700);
		created = true;
	} else {
		log(`Repairing the kernel environment at ${venv}: installed versions differ from ${pinText}`);
	}

	const extra = (env.PRIME_AGENT_PIP_ARGS ?? "").split(/\s+/).filter(Boolean);
	const pipArgs = ["-m", "pip", "install", "--retries", "0", "--timeout", "3", "-r", REQUIREMENTS_FILE, ...extra];
	log(`Installing ${pinText} (pip install --retries 0 --timeout 3${extra.length ? ` ${extra.join(" ")}` : ""})`);
	// pip is chatty; pass on the lines that show progress and anything that went wrong.
	const progress = /^\s*(Collecting|Installing|Successfully|ERROR|error:)/;
	const installed = await runPython(python, pipArgs, (line) => {
		if (progress.test(line)) log(`  ${line.trim()}`);
	});
	if (installed.code !== 0 || installed.spawnError) {
		throw new KernelSetupError(
			`Installing the kernel requirements into ${venv} failed (pip exited with code ${installed.code}).\n` +
				`${installed.output.trim().split("\n").slice(-15).join("\n")}\n` +
				"Check the network or package index (PRIME_AGENT_PIP_ARGS passes extra flags to pip, e.g. " +
				'"--index-url <url>"), then run setup again.',
		);
	}
	if (!(await hasPinnedVersions(python, pins))) {
		throw new KernelSetupError(`pip finished but ${venv} still lacks ${pinText}. Remove ${venv} and run setup again.`);
	}
	log(`Kernel environment is ready: ${venv}`);
	return { python, created };
}
