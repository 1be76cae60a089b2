import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";

/**
 * The guard: reads `+<pgid>` and `-<pgid>` lines, and at end of input (the host is gone) sends
 * SIGKILL to every process group still listed. POSIX sh with builtins only, so it costs a megabyte
 * and runs the same on Linux and macOS.
 */
const GUARD_SCRIPT = `groups=
while read -r line; do
	case $line in
	+*) groups="$groups \${line#+}" ;;
	-*) kept=
		for group in $groups; do [ "$group" = "\${line#-}" ] || kept="$kept $group"; done
		groups=$kept ;;
	esac
done
for group in $groups; do kill -s KILL -- "-$group" 2>/dev/null; done
`;

let guard: ChildProcess | undefined;
const guarded = new Set<number>();

/**
 * Kills the process group `pgid` (a child spawned with `detached: true` leads one) when this host
 * process dies, however it dies: SIGKILL included, when no handler of ours runs. Call it right after
 * the spawn; call the function it returns once the group is gone (after killing what was left of
 * it), so a group id reused later is never killed.
 *
 * One guard process per host, started on first use, reads the groups from a pipe whose write end
 * only this process holds (it is close-on-exec: no child inherits it). When the host dies the kernel
 * closes that end, the guard reads end of file, and the groups die at once (no polling), the whole
 * of each group (a gate's `sleep 200 &`, the real server behind an `npx` one), not only the child. The guard runs in a session of its own (no terminal
 * signal reaches it) in `/` (it keeps no folder busy) with an empty environment (no secret in it).
 */
export function killGroupWithHost(pgid: number): () => void {
	guarded.add(pgid);
	tell(`+${pgid}`);
	return () => {
		if (guarded.delete(pgid)) tell(`-${pgid}`);
	};
}

function tell(line: string): void {
	if (guard) guard.stdin?.write(`${line}\n`);
	else if (guarded.size > 0) startGuard();
}

/** Starts a guard that learns every group registered; another replaces it if it is killed. */
function startGuard(): void {
	const child = spawn("/bin/sh", ["-c", GUARD_SCRIPT], {
		cwd: "/",
		env: {},
		stdio: ["pipe", "ignore", "ignore"],
		detached: true,
	});
	guard = child;
	let started = false;
	child.once("spawn", () => {
		started = true;
	});
	child.once("exit", () => {
		if (guard !== child) return;
		guard = undefined;
		// Killed by hand: lines written since may be lost, so the next guard learns every group again
		// (one that never started, say /bin/sh missing, is not retried in a loop).
		if (started && guarded.size > 0) startGuard();
	});
	child.stdin?.on("error", () => {
		// The guard is gone; its replacement learns the groups.
	});
	child.stdin?.write([...guarded].map((pgid) => `+${pgid}\n`).join(""));
	// Neither the guard nor its pipe keeps the host's event loop alive.
	child.unref();
	(child.stdin as Socket | null)?.unref();
}
