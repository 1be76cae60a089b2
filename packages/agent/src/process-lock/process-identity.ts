import { readFileSync } from "node:fs";

/**
 * A process's start identity: its start time in clock ticks since boot on Linux (field 22 of
 * /proc/<pid>/stat), so a pid reused by another process does not pass for the one recorded.
 * Undefined when the process does not exist.
 */
export function processStartId(pid: number): string | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		// The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
		const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		return fields[19];
	} catch {
		if (process.platform === "linux") return undefined;
		try {
			process.kill(pid, 0);
			return "alive";
		} catch {
			return undefined;
		}
	}
}

/** The process with this pid is alive and is the one recorded (same start identity). */
export function isSameProcess(pid: number | undefined, startId: string | undefined): boolean {
	if (!pid || !startId) return false;
	const now = processStartId(pid);
	if (now === undefined) return false;
	// A zombie (exited, not yet reaped) is not alive.
	try {
		const state = readFileSync(`/proc/${pid}/stat`, "utf8");
		if (state.slice(state.lastIndexOf(")") + 2).startsWith("Z")) return false;
	} catch {}
	return now === startId;
}
