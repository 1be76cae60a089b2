// A host process for tests of killGroupWithHost, driven by lines on stdin:
// "guard" starts a process group (a shell with a background and a foreground sleep), registers it
// and prints {"pids": [...]}; "release" does the same, then releases it at once; "quit" stops
// reading stdin, so nothing but the guard (which must not) keeps the host's event loop alive.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { killGroupWithHost } from "../dist/index.js";

function startGroup() {
	const child = spawn("sh", ["-c", "sleep 300 & echo $!; exec sleep 300"], {
		detached: true,
		stdio: ["ignore", "pipe", "ignore"],
	});
	return new Promise((resolve) =>
		child.stdout.once("data", (chunk) => {
			child.stdout.destroy();
			child.unref();
			resolve({ pid: child.pid, pids: [child.pid, Number(chunk.toString().trim())] });
		}),
	);
}

const lines = createInterface({ input: process.stdin });
lines.on("line", async (line) => {
	if (line === "quit") {
		lines.close();
		process.stdin.destroy();
		return;
	}
	const group = await startGroup();
	const release = killGroupWithHost(group.pid);
	if (line === "release") release();
	process.stdout.write(`${JSON.stringify({ pids: group.pids })}\n`);
});
