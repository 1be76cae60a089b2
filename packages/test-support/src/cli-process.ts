import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";

/** The built command line, found beside the `prime-agent` package's built entry as Node finds it. */
function builtCli(): string {
	let entry = "";
	try {
		entry = createRequire(import.meta.url).resolve("prime-agent");
	} catch {
		// Not built: the check below names what to do.
	}
	return entry ? join(dirname(entry), "cli", "main.js") : "packages/agent/dist/cli/main.js";
}

/**
 * Every command line a test started and that has not exited. A test that fails or times out
 * while one runs would leave it running (with its kernel) past the test file: after each test,
 * what is left is killed (SIGKILL; its kernel's guard takes the kernel down with it).
 */
const running = new Set<ChildProcess>();
afterEach(() => {
	for (const child of running) child.kill("SIGKILL");
	running.clear();
});

function startCli(args: string[], cwd: string, env: NodeJS.ProcessEnv, stdin: "ignore" | "pipe"): ChildProcess {
	const cli = builtCli();
	if (!existsSync(cli))
		throw new Error(`These tests run the built command line; build it first with \`npx tsc -b\` (${cli} is missing).`);
	const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: [stdin, "pipe", "pipe"] });
	running.add(child);
	child.on("exit", () => running.delete(child));
	return child;
}

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
	const child = startCli(args, cwd, env, "ignore");
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

export interface TextCliProcess {
	child: ChildProcess;
	stdout(): string;
	stderr(): string;
	/** Write a line to the process's stdin. */
	line(text: string): void;
	/** Resolves once stdout or stderr (`which`) holds `text`; rejects if the process exits first. */
	waitFor(which: "stdout" | "stderr", text: string): Promise<void>;
	exitCode(): Promise<number | null>;
}

/** Run the built command line in text mode as a real process, its stdin a pipe (the line chat, `attach`). */
export function spawnCliText(args: string[], cwd: string, env: NodeJS.ProcessEnv): TextCliProcess {
	const child = startCli(args, cwd, env, "pipe");
	const text = { stdout: "", stderr: "" };
	const waiters = new Set<() => void>();
	for (const which of ["stdout", "stderr"] as const)
		child[which]?.on("data", (chunk) => {
			text[which] += chunk;
			for (const waiter of [...waiters]) waiter();
		});
	let code: number | null | undefined;
	const exited = new Promise<number | null>((resolve) =>
		child.on("exit", (exitCode) => {
			code = exitCode;
			for (const waiter of [...waiters]) waiter();
			resolve(exitCode);
		}),
	);
	return {
		child,
		stdout: () => text.stdout,
		stderr: () => text.stderr,
		line: (value) => child.stdin?.write(`${value}\n`),
		waitFor: (which, wanted) =>
			new Promise((resolve, reject) => {
				const check = () => {
					if (text[which].includes(wanted)) {
						waiters.delete(check);
						resolve();
					} else if (code !== undefined) {
						waiters.delete(check);
						reject(
							new Error(`the CLI exited (${code}) before its ${which} held ${JSON.stringify(wanted)}:\n${text.stderr}`),
						);
					}
				};
				waiters.add(check);
				check();
			}),
		exitCode: () => exited,
	};
}

/** Run the built command line to its end; its exit code and output. */
export async function runCliText(
	args: string[],
	cwd: string,
	env: NodeJS.ProcessEnv,
	input = "",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
	const cli = spawnCliText(args, cwd, env);
	cli.child.stdin?.end(input);
	const code = await cli.exitCode();
	return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}
