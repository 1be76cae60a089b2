import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

export interface CliProcess {
	child: ChildProcess;
	/** JSON events seen so far on stdout (json mode). */
	events: Record<string, unknown>[];
	stderr(): string;
	/** Resolves with the first event that passes `test`; rejects if the process exits first. */
	waitForEvent(test: (event: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
	exitCode(): Promise<number | null>;
}

/** Run the built `prime-agent` command line in json mode as a real process. */
export function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv): CliProcess {
	if (!existsSync(CLI))
		throw new Error(`These tests run the built command line; build it first with \`npx tsc -b\` (${CLI} is missing).`);
	const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
	const events: Record<string, unknown>[] = [];
	const waiters: {
		test: (event: Record<string, unknown>) => boolean;
		resolve: (event: Record<string, unknown>) => void;
	}[] = [];
	let stderr = "";
	let buffer = "";
	child.stderr?.on("data", (chunk) => {
		stderr += chunk;
	});
	child.stdout?.on("data", (chunk) => {
		buffer += chunk;
		const lines = buffer.split("\n");
		buffer = lines.pop() ?? "";
		for (const line of lines) {
			const event = JSON.parse(line) as Record<string, unknown>;
			events.push(event);
			for (const waiter of waiters.splice(0)) {
				if (waiter.test(event)) waiter.resolve(event);
				else waiters.push(waiter);
			}
		}
	});
	const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
	return {
		child,
		events,
		stderr: () => stderr,
		waitForEvent: (test) => {
			const seen = events.find(test);
			if (seen) return Promise.resolve(seen);
			return new Promise((resolve, reject) => {
				waiters.push({ test, resolve });
				void exited.then((code) => reject(new Error(`the CLI exited (${code}) before the awaited event: ${stderr}`)));
			});
		},
		exitCode: () => exited,
	};
}
