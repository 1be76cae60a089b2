import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { writePrivateJson } from "../home/index.js";

/** The folder of the agent home holding one file per kernel this home started on a Jupyter Server. */
export const SERVER_KERNELS_DIR = "server-kernels";

/**
 * A kernel an agent of this home started on a Jupyter Server, recorded when it started and
 * forgotten once the server deleted it. A record whose kernel the server still lists after its
 * agent is gone is a leftover (`prime-agent doctor` lists those).
 */
export interface ServerKernelRecord {
	/** The server's base URL (never with a token). */
	url: string;
	kernelId: string;
	kernelName: string;
	/** The session the kernel served (its id). */
	session: string;
	/** ISO time the kernel started. */
	startedAt: string;
	/** The agent process that started it, on this machine. */
	host: { hostname: string; pid: number };
}

/** The kernels recorded in an agent home, one file each (concurrent agents never write the same file). */
export class ServerKernelRegistry {
	readonly dir: string;

	constructor(agentHome: string) {
		this.dir = join(agentHome, SERVER_KERNELS_DIR);
	}

	/** Record a kernel just started (by this process, now, unless `host` and `startedAt` say otherwise). */
	add(
		kernel: Omit<ServerKernelRecord, "host" | "startedAt"> & Partial<Pick<ServerKernelRecord, "host" | "startedAt">>,
	): ServerKernelRecord {
		const record: ServerKernelRecord = {
			startedAt: new Date().toISOString(),
			host: { hostname: hostname(), pid: process.pid },
			...kernel,
		};
		writePrivateJson(this.fileOf(kernel.url, kernel.kernelId), record);
		return record;
	}

	/** Forget a kernel the server deleted (or no longer has). */
	remove(url: string, kernelId: string): void {
		rmSync(this.fileOf(url, kernelId), { force: true });
	}

	/** Every record, oldest first; a file that does not read as a record is skipped (and named in `unreadable`). */
	list(): { records: ServerKernelRecord[]; unreadable: string[] } {
		let names: string[];
		try {
			names = readdirSync(this.dir).filter((name) => name.endsWith(".json"));
		} catch {
			return { records: [], unreadable: [] };
		}
		const records: ServerKernelRecord[] = [];
		const unreadable: string[] = [];
		for (const name of names) {
			const path = join(this.dir, name);
			try {
				const record = JSON.parse(readFileSync(path, "utf8")) as ServerKernelRecord;
				if (typeof record.url !== "string" || typeof record.kernelId !== "string") throw new Error("not a record");
				records.push(record);
			} catch {
				unreadable.push(path);
			}
		}
		records.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.kernelId.localeCompare(b.kernelId));
		return { records, unreadable };
	}

	/** One file per server and kernel; named by a hash: the server's id is never trusted as a file name. */
	private fileOf(url: string, kernelId: string): string {
		return join(this.dir, `${createHash("sha256").update(`${url}\n${kernelId}`).digest("hex").slice(0, 32)}.json`);
	}
}

/** Whether the agent that started `record` still runs (on this machine; another machine's is assumed alive). */
export function recordOwnerAlive(record: ServerKernelRecord): boolean {
	if (record.host.hostname !== hostname()) return true;
	try {
		process.kill(record.host.pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "EPERM";
	}
}
