/**
 * A spare worker: a worker process started ahead of need, its modules loaded (a second or more of
 * the start of every worker), waiting for the supervisor to give it an agent's key. The next
 * session start or restart (`/model`) takes it and only starts its session. It holds no session,
 * kernel or key of its own: it is not an agent, and it exits with the supervisor (its IPC channel
 * closes).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The argument that starts `worker-main.js` as a spare instead of as agent `<key>`. */
export const SPARE_ARGUMENT = "--spare";

/** What the supervisor tells a spare it gives an agent to: the worker runs as if started for it. */
export interface Adoption {
	type: "adopt";
	key: string;
	cwd: string;
	env: Record<string, string>;
}

interface Spare {
	child: ChildProcess;
	log: string;
	/** True once the spare has loaded its modules and listens; false when it exited first. */
	ready: Promise<boolean>;
	loaded: boolean;
}

/** What the supervisor's spare is doing: none, loading its modules, or loaded and waiting to be given. */
export type SpareState = "none" | "loading" | "ready";

/** The environment variable that turns spares off (`0`): every worker then starts from nothing. */
export const SPARE_ENV = "PRIME_AGENT_SPARE_WORKER";

/** The supervisor's one spare, started after a worker has started (sessions are being started here). */
export class SpareWorkers {
	private spare: Spare | undefined;
	private closed = false;
	private counter = 0;

	constructor(
		private readonly daemonDir: string,
		private readonly workerMain: string,
		private readonly enabled: boolean,
	) {
		// Logs of spares whose supervisor was killed: nobody adopted them.
		for (const name of readdirSync(daemonDir))
			if (/^spare-\d+-\d+\.log$/.test(name)) rmSync(join(daemonDir, name), { force: true });
	}

	get state(): SpareState {
		return !this.spare ? "none" : this.spare.loaded ? "ready" : "loading";
	}

	/** Start a spare when there is none; none when its log cannot be made (a full disk): workers then start from nothing. */
	prepare(): void {
		if (!this.enabled || this.closed || this.spare) return;
		const log = join(this.daemonDir, `spare-${process.pid}-${++this.counter}.log`);
		let fd: number;
		try {
			fd = openSync(log, "a", 0o600);
		} catch {
			return;
		}
		const child = spawn(process.execPath, [this.workerMain, SPARE_ARGUMENT], {
			cwd: this.daemonDir,
			detached: true,
			stdio: ["ignore", fd, fd, "ipc"],
		});
		closeSync(fd);
		child.unref();
		child.channel?.unref();
		const ready = new Promise<boolean>((resolve) => {
			child.once("message", (message: { type?: string }) => resolve(message?.type === "ready"));
			child.once("exit", () => resolve(false));
			child.once("error", () => resolve(false));
		});
		const spare: Spare = { child, log, ready, loaded: false };
		void ready.then((loaded) => {
			spare.loaded = loaded;
		});
		child.once("exit", () => {
			if (this.spare === spare) this.spare = undefined;
			// Not adopted: its log holds nothing of any agent's.
			if (existsSync(log)) rmSync(log, { force: true });
		});
		this.spare = spare;
	}

	/**
	 * Give the spare (waiting for it to be ready when it is still loading) to agent `key`: its log
	 * becomes the agent's `logPath` (after what the file held), it moves to `cwd` and takes `env`.
	 * Undefined when there is no spare or it could not be given (the caller starts a worker itself).
	 */
	async adopt(
		key: string,
		logPath: string,
		cwd: string,
		env: Record<string, string>,
	): Promise<ChildProcess | undefined> {
		const spare = this.spare;
		this.spare = undefined;
		if (!spare || !(await spare.ready) || !spare.child.connected) {
			spare?.child.kill();
			return undefined;
		}
		// The spare goes on appending to its own file, which becomes the agent's log: what the agent's
		// log held (an earlier worker's lines, on a restart) goes first, so it reads in order.
		try {
			if (existsSync(logPath))
				writeFileSync(spare.log, Buffer.concat([readFileSync(logPath), readFileSync(spare.log)]));
			renameSync(spare.log, logPath);
		} catch {
			// The disk refuses (full): the agent's worker starts from nothing, as without a spare.
			spare.child.kill();
			return undefined;
		}
		const adoption: Adoption = { type: "adopt", key, cwd, env };
		const sent = await new Promise<boolean>((resolve) => spare.child.send(adoption, (error) => resolve(!error)));
		if (!sent) {
			spare.child.kill();
			return undefined;
		}
		return spare.child;
	}

	/** Stop the spare (the supervisor is going). */
	close(): void {
		this.closed = true;
		this.spare?.child.kill();
		this.spare = undefined;
	}
}
