import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { processGone } from "prime-agent-test-support/process-gone";

/** The built `prime-agent` command line (these tests run it for real, as a user would). */
export const CLI = fileURLToPath(new URL("../../agent/dist/cli/main.js", import.meta.url));

/** A program running in a tmux pane on its own tmux server (one socket per test). */
export interface TmuxPane {
	/** Send keys as tmux names them (`Enter`, `C-c`, `Escape`, `M-Enter`) or literal text with `literal`. */
	keys(...keys: string[]): void;
	/** Type text exactly (no key names). */
	type(text: string): void;
	/** The visible screen, one string (lines joined with `\n`, trailing blanks trimmed). */
	screen(): string;
	/** Poll the screen until `test` passes; throws with the last screen after `timeoutMs` (default 60 s: a loaded machine). */
	waitFor(test: string | RegExp | ((screen: string) => boolean), timeoutMs?: number): Promise<string>;
	resize(width: number, height: number): void;
	/** Start the program of a pane opened `gated` (keys typed before this wait in the terminal for it). */
	release(): void;
	/** Whether the program in the pane has exited. */
	exited(): boolean;
	/**
	 * Wait until the program has exited and its screen shows `lastWords` (compared without white
	 * space: tmux wraps a long line mid-word). tmux can mark the pane dead before it has drawn what
	 * the program wrote last, so the screen at the moment of exit may not show it yet.
	 */
	waitForExit(lastWords: string, timeoutMs?: number): Promise<string>;
	/** The process id of the program in the pane. */
	pid(): number;
	/** Record what the program writes from now on; the returned function reads it (escapes included). */
	record(): () => string;
	/**
	 * Kill the tmux server, which hangs up the terminal (the program gets SIGHUP, as when a terminal
	 * is closed); resolves once the program has exited (SIGKILL to its process group if it has not
	 * within 20 s).
	 */
	kill(): Promise<void>;
}

/** How long `kill` lets the program exit after its hang-up before killing it. */
const HANGUP_EXIT_MS = 20_000;

let counter = 0;

/**
 * Start `node <CLI> ...args` in a detached tmux session of `width` x `height` on a fresh tmux
 * server (`tmux -L <unique socket>`), in `cwd` with exactly `env` (plus TERM). The pane stays after
 * the program exits, so its last screen can be read. A `gated` pane starts the program only at
 * `release()`: what is typed before is certain to reach it before its first frame, on any load.
 */
export function startInTmux(
	args: string[],
	options: { cwd: string; env: NodeJS.ProcessEnv; width?: number; height?: number; gated?: boolean },
): TmuxPane {
	if (!existsSync(CLI))
		throw new Error(`These tests run the built command line; build it first with \`npx tsc -b\` (${CLI} is missing).`);
	try {
		execFileSync("tmux", ["-V"], { stdio: "ignore" });
	} catch {
		throw new Error(
			"These tests drive prime-agent in tmux, which is not installed: `apt-get install -y tmux` (or brew).",
		);
	}
	const socket = `prime-tui-${process.pid}-${++counter}-${Date.now()}`;
	const dir = mkdtempSync(join(tmpdir(), "prime-tui-tmux-"));
	const config = join(dir, "tmux.conf");
	writeFileSync(config, "set -g remain-on-exit on\nset -g status off\nset -g escape-time 0\n");
	const tmux = (...tmuxArgs: string[]) =>
		execFileSync("tmux", ["-L", socket, "-f", config, ...tmuxArgs], { encoding: "utf8" });
	const variables = { ...options.env, TERM: "xterm-256color" };
	const command = [process.execPath, CLI, ...args].map(shellQuote).join(" ");
	// The shell waits on a named pipe, not the terminal: keys typed meanwhile stay in the terminal.
	const gate = join(dir, "gate");
	if (options.gated) execFileSync("mkfifo", [gate]);
	const wait = options.gated ? `read _ < ${shellQuote(gate)}; ` : "";
	// The server and the program are known before anything else can fail, so that they are always stopped.
	let serverPid: number;
	let programPid: number;
	let socketPath: string;
	try {
		tmux(
			"new-session",
			"-d",
			"-x",
			String(options.width ?? 80),
			"-y",
			String(options.height ?? 24),
			"-c",
			options.cwd,
			`${wait}exec env -i ${Object.entries(variables)
				.filter(([, value]) => value !== undefined)
				.map(([key, value]) => shellQuote(`${key}=${value}`))
				.join(" ")} ${command}`,
		);
		serverPid = Number(tmux("display-message", "-p", "-t", "0", "#{pid}").trim());
		programPid = Number(tmux("display-message", "-p", "-t", "0", "#{pane_pid}").trim());
		socketPath = tmux("display-message", "-p", "-t", "0", "#{socket_path}").trim();
	} catch (error) {
		try {
			tmux("kill-server");
		} catch {
			// No server started.
		}
		rmSync(dir, { recursive: true, force: true });
		throw error;
	}
	const standDown = watchdog(serverPid, programPid, socketPath);
	let killed: Promise<void> | undefined;
	const screen = () =>
		tmux("capture-pane", "-p", "-t", "0")
			.split("\n")
			.map((line) => line.trimEnd())
			.join("\n")
			.trimEnd();
	const exited = () => tmux("display-message", "-p", "-t", "0", "#{pane_dead}").trim() === "1";
	const waitFor = async (
		test: string | RegExp | ((screen: string) => boolean),
		timeoutMs = 60_000,
	): Promise<string> => {
		const passes =
			typeof test === "string"
				? (text: string) => text.includes(test)
				: test instanceof RegExp
					? (text: string) => test.test(text)
					: test;
		const deadline = Date.now() + timeoutMs;
		let last = "";
		while (Date.now() < deadline) {
			last = screen();
			if (passes(last)) return last;
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		throw new Error(`The screen never showed ${String(test)} within ${timeoutMs} ms. Last screen:\n${last}`);
	};
	return {
		keys: (...keys) => {
			tmux("send-keys", "-t", "0", ...keys);
		},
		type: (text) => {
			tmux("send-keys", "-t", "0", "-l", text);
		},
		screen,
		waitFor,
		resize: (width, height) => {
			tmux("resize-window", "-t", "0", "-x", String(width), "-y", String(height));
		},
		release: () => {
			if (!options.gated) throw new Error("release() is for a pane started with `gated: true`.");
			writeFileSync(gate, "go\n");
		},
		exited,
		waitForExit: (lastWords, timeoutMs = 60_000) => {
			const words = lastWords.replace(/\s+/g, "");
			return waitFor((text) => exited() && text.replace(/\s+/g, "").includes(words), timeoutMs);
		},
		pid: () => programPid,
		record: () => {
			const file = join(dir, "output.raw");
			writeFileSync(file, "");
			tmux("pipe-pane", "-o", "-t", "0", `cat >> ${shellQuote(file)}`);
			return () => readFileSync(file, "utf8");
		},
		kill: () => {
			killed ??= (async () => {
				try {
					tmux("kill-server");
				} catch {
					// Already gone, or not answering: killed below.
				}
				const deadline = Date.now() + HANGUP_EXIT_MS;
				while (!processGone(programPid) && Date.now() < deadline)
					await new Promise((resolve) => setTimeout(resolve, 50));
				for (const target of [-programPid, serverPid]) {
					try {
						process.kill(target, "SIGKILL");
					} catch {
						// Gone.
					}
				}
				standDown();
				// A server that had to be killed leaves its socket file.
				rmSync(socketPath, { force: true });
				rmSync(dir, { recursive: true, force: true });
			})();
			return killed;
		},
	};
}

/**
 * A tmux server and the program in its pane never outlive this process, even when the test run
 * is killed or a test that timed out goes on starting panes after its clean-up: a watchdog shell
 * reads a pipe only this process holds; when this process dies the pipe closes and it kills the
 * program's process group and the server, and removes the server's socket. The returned function
 * stands it down (after `kill`).
 */
function watchdog(serverPid: number, programPid: number, socketPath: string): () => void {
	// Only what is still this pane's: the program while the server is its parent, then the server.
	const script = [
		'read line; [ "$line" = done ] && exit 0',
		`read -r _ _ _ parent _ < /proc/${programPid}/stat && [ "$parent" = ${serverPid} ] && kill -s KILL -- -${programPid}`,
		`grep -qs tmux /proc/${serverPid}/comm && kill -s KILL ${serverPid}`,
		`rm -f ${shellQuote(socketPath)}`,
	].join("\n");
	const child = spawn("/bin/sh", ["-c", script], {
		cwd: "/",
		env: {},
		stdio: ["pipe", "ignore", "ignore"],
		detached: true,
	});
	child.stdin?.on("error", () => {});
	// Neither the watchdog nor its idle pipe keeps the test process alive.
	child.unref();
	(child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
	return () => child.stdin?.end("done\n");
}

function shellQuote(text: string): string {
	return `'${text.replace(/'/g, `'\\''`)}'`;
}
