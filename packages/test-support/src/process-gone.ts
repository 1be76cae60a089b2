import { readFileSync } from "node:fs";

/** Whether `pid` is gone (or a zombie waiting to be reaped, which runs no code). */
export function processGone(pid: number): boolean {
	try {
		process.kill(pid, 0);
	} catch {
		return true;
	}
	try {
		const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop()?.trim().split(" ")[0];
		return state === "Z" || state === "X";
	} catch {
		return true;
	}
}

/** Polls until `pid` is gone; resolves with the time it took, or rejects after `timeoutMs`. */
export async function waitUntilGone(pid: number, timeoutMs: number): Promise<number> {
	const started = Date.now();
	while (!processGone(pid)) {
		if (Date.now() - started > timeoutMs) throw new Error(`process ${pid} still running after ${timeoutMs} ms`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	return Date.now() - started;
}
