import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Some tests run the built kernel package in a child process (a host that can be killed or
 * paused). Build it first, so such a test never runs a stale `dist/` (incremental: about a second
 * when nothing changed).
 */
export default function setup(): void {
	const root = dirname(fileURLToPath(import.meta.url));
	execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-b", "packages/kernel"], {
		cwd: root,
		stdio: "inherit",
	});
}
