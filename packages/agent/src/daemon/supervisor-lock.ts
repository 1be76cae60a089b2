import { writingTo } from "../home/index.js";
import { takeProcessLock } from "../process-lock/index.js";

/**
 * Take the supervisor lock at `path` (one supervisor per agent home; see `takeProcessLock`): a lock
 * left by a supervisor that died (kill -9) is taken over. Returns whether this process holds it; a
 * disk that refuses the write is a `DiskWriteError` naming the lock (and leaves no file behind).
 * The supervisor holds it until it exits.
 */
export function takeSupervisorLock(path: string): boolean {
	return writingTo(path, () => takeProcessLock(path, {}), "start it again (any `prime-agent` command does)").taken;
}
