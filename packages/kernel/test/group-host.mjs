// A host process for tests of spawnGuardedGroup, driven by lines on stdin. "group" starts a
// guarded shell with a background and a foreground sleep and prints {"pids": [shell, background]};
// "leader-exits" starts one that leaves a background sleep and exits at once, and prints
// {"pids": [background]} once the shell has exited; "quit" stops reading stdin, so nothing but the
// guard (which must not) keeps the host's event loop alive.
import { createInterface } from "node:readline";
import { spawnGuardedGroup } from "../dist/index.js";

const scripts = {
	group: "sleep 300 & echo $!; exec sleep 300",
	"leader-exits": "sleep 300 > /dev/null 2>&1 & echo $!",
};

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
	if (line === "quit") {
		lines.close();
		process.stdin.destroy();
		return;
	}
	const child = spawnGuardedGroup("sh", ["-c", scripts[line]], { stdio: ["ignore", "pipe", "ignore"] });
	child.stdout.once("data", (chunk) => {
		const background = Number(chunk.toString().trim());
		const report = (pids) => process.stdout.write(`${JSON.stringify({ pids })}\n`);
		if (line !== "group") {
			child.once("exit", () => report([background]));
			return;
		}
		// Nothing of the group keeps the host running, so "quit" shows what the guard does.
		child.stdout.destroy();
		child.unref();
		report([child.pid, background]);
	});
});
