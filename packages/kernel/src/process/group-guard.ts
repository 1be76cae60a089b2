import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";

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
 * `spawn(command, args, options)`, the child leading a new process group (`detached`) that never
 * outlives it or this host: when the child exits, what is left of its group is killed (a gate's
 * `sleep 200 &`, the real server behind an `npx` one); when this host dies, however it dies
 * (SIGKILL included, when no handler of ours runs), the whole group is killed at once.
 *
 * One guard process per host reads the groups from a pipe whose write end only this process holds
 * (close-on-exec: no child inherits it). When the host dies the operating system closes that end,
 * the guard reads end of file and kills every group still listed: no polling. The guard is started
 * before the first child, so registering a child is one write in the statement after its spawn
 * (only a host killed between the two, a matter of microseconds, leaves that child unguarded). It
 * runs in a session of its own (no terminal signal reaches it) in `/` (it keeps no folder busy)
 * with an empty environment (no secret in it).
 */
export function spawnGuardedGroup(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
	if (!guard) startGuard();
	const child = spawn(command, args, { ...options, detached: true });
	const pgid = child.pid;
	if (pgid === undefined) return child; // could not start: the child emits "error"
	guarded.add(pgid);
	guard?.stdin?.write(`+${pgid}\n`);
	child.once("exit", () => {
		try {
			process.kill(-pgid, "SIGKILL");
		} catch {
			// No member left.
		}
		// Only now: a group id is not reused while a member lives, so a guard never kills a stranger.
		guarded.delete(pgid);
		guard?.stdin?.write(`-${pgid}\n`);
	});
	return child;
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
	child.on("error", () => {
		// Could not start (exit follows): each later spawn tries again.
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
	if (guarded.size > 0) child.stdin?.write([...guarded].map((pgid) => `+${pgid}\n`).join(""));
	// The guard does not keep the host's event loop alive (nor does its idle pipe).
	child.unref();
}
