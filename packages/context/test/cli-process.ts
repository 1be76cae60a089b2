import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built command line; tests run the real program as a user would. */
export const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
export const DIST_INDEX = fileURLToPath(new URL("../dist/index.js", import.meta.url));

export function requireBuild(): void {
	if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first with \`npx tsc -b packages/context\``);
}

export interface CliResult {
	status: number | null;
	signal: NodeJS.Signals | null;
	stdout: Buffer;
	stderr: string;
}

export interface CliOptions {
	env: NodeJS.ProcessEnv;
	cwd: string;
	input?: Buffer | string;
	/** Called once the process is running (e.g. to signal it later). */
	onSpawn?: (pid: number) => void;
}

export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [CLI, ...args], {
			cwd: options.cwd,
			env: options.env,
			stdio: ["pipe", "pipe", "pipe"],
		});
		const out: Buffer[] = [];
		const err: Buffer[] = [];
		child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
		child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
		child.on("error", reject);
		child.on("close", (status, signal) =>
			resolve({ status, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }),
		);
		if (child.pid !== undefined) options.onSpawn?.(child.pid);
		child.stdin.end(options.input ?? "");
	});
}
