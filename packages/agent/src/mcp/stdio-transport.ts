import type { ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import { getDefaultEnvironment, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { spawnGuardedGroup } from "prime-agent-kernel";

/** How long `close()` waits for the server after closing its stdin, and again after SIGTERM. */
const CLOSE_GRACE_MS = 2_000;

/**
 * The SDK's stdio client transport (same parameters, same messages, same polite close), except
 * that the server leads a process group of its own and every process in that group goes with it:
 * when the server exits, when the session closes it, and when the agent dies, SIGKILL included
 * (`spawnGuardedGroup`). A server started through `npx` or a shell script is a tree of processes,
 * and many servers do not exit when their stdin closes; the SDK's transport knows only the first
 * process and only a host that lives to close it. The group also keeps the terminal's Ctrl-C
 * (meant for the agent) away from the servers.
 */
export class StdioGroupTransport implements Transport {
	onclose?: () => void;
	onerror?: (error: Error) => void;
	onmessage?: (message: JSONRPCMessage) => void;

	private child: ChildProcess | undefined;
	private readonly readBuffer = new ReadBuffer();
	private readonly stderrStream = new PassThrough();

	constructor(private readonly server: StdioServerParameters) {}

	/** The server's stderr when `stderr: "pipe"` was asked (available before `start()`). */
	get stderr(): PassThrough | null {
		return this.server.stderr === "pipe" ? this.stderrStream : null;
	}

	start(): Promise<void> {
		if (this.child) throw new Error("This MCP stdio transport was already started.");
		return new Promise((resolve, reject) => {
			const child = spawnGuardedGroup(this.server.command, this.server.args ?? [], {
				// `env`, when given, is the server's whole environment: the caller chose every variable.
				env: this.server.env ?? getDefaultEnvironment(),
				cwd: this.server.cwd,
				stdio: ["pipe", "pipe", this.server.stderr ?? "inherit"],
			});
			this.child = child;
			child.on("error", (error) => {
				reject(error);
				this.onerror?.(error);
			});
			child.on("spawn", () => resolve());
			child.on("close", () => {
				if (this.child === child) this.child = undefined;
				this.onclose?.();
			});
			child.stdin?.on("error", (error) => this.onerror?.(error));
			child.stdout?.on("error", (error) => this.onerror?.(error));
			child.stdout?.on("data", (chunk: Buffer) => {
				try {
					this.readBuffer.append(chunk);
					this.readMessages();
				} catch (error) {
					this.onerror?.(error as Error);
					this.close().catch(() => {});
				}
			});
			child.stderr?.pipe(this.stderrStream);
		});
	}

	send(message: JSONRPCMessage): Promise<void> {
		return new Promise((resolve) => {
			const stdin = this.child?.stdin;
			if (!stdin) throw new Error("Not connected");
			if (stdin.write(serializeMessage(message))) resolve();
			else stdin.once("drain", resolve);
		});
	}

	/** Closes stdin; a server still running after 2 s gets SIGTERM, after 2 more SIGKILL (its whole group). */
	async close(): Promise<void> {
		const child = this.child;
		this.child = undefined;
		if (child) {
			const closed = new Promise<void>((resolve) => {
				if (child.exitCode !== null || child.signalCode !== null) resolve();
				else child.once("exit", () => resolve());
			});
			const within = (ms: number) => Promise.race([closed, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
			child.stdin?.end();
			await within(CLOSE_GRACE_MS);
			if (running(child)) {
				signalGroup(child, "SIGTERM");
				await within(CLOSE_GRACE_MS);
			}
			if (running(child)) signalGroup(child, "SIGKILL");
		}
		this.readBuffer.clear();
	}

	private readMessages(): void {
		for (;;) {
			let message: JSONRPCMessage | null;
			try {
				message = this.readBuffer.readMessage();
			} catch (error) {
				this.onerror?.(error as Error);
				continue;
			}
			if (message === null) return;
			this.onmessage?.(message);
		}
	}
}

function running(child: ChildProcess): boolean {
	return child.exitCode === null && child.signalCode === null;
}

/** `signal` to the process group `child` leads (nothing when the group is already gone). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		// No member left.
	}
}
