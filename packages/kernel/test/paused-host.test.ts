import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const hostScript = join(dirname(fileURLToPath(import.meta.url)), "cell-host.mjs");

interface HostReport {
	status: string;
	fullOutputBytes: number;
	lostOutputChars?: number;
	receivedChars: number;
	stderr: string;
	fileTail: string;
}

/**
 * Runs `cells` in a kernel owned by a separate host process, stops that host (SIGSTOP, as Ctrl-Z
 * does) for `pauseMs` once the first cell's first output reached it, then resumes it. Resolves
 * with one report per cell.
 */
async function runWithHostPaused(cells: string[], pauseMs: number): Promise<HostReport[]> {
	const host = spawn(process.execPath, [hostScript, ...cells], { stdio: ["ignore", "pipe", "inherit"] });
	let out = "";
	let paused = false;
	const reports = new Promise<HostReport[]>((resolve, reject) => {
		host.stdout.on("data", (chunk: Buffer) => {
			out += chunk.toString();
			if (!paused && out.includes("first output\n")) {
				paused = true;
				host.kill("SIGSTOP");
				setTimeout(() => host.kill("SIGCONT"), pauseMs);
			}
			const lines = out.split("\n").filter((text) => text.startsWith("{"));
			if (lines.length === cells.length) resolve(lines.map((line) => JSON.parse(line)));
		});
		host.once("close", (code) => reject(new Error(`the host exited (${code}) before reporting; output: ${out}`)));
	});
	try {
		return await reports;
	} finally {
		// Done with it either way (its kernel goes with it): a failed test leaves nothing running.
		host.kill("SIGCONT");
		host.kill("SIGKILL");
	}
}

describe("a host that stops reading", () => {
	it("keeps every byte of a 30 MB print through an 11 s pause of the host (longer than any give-up timer)", {
		timeout: 90_000,
	}, async () => {
		const lines = 300_000;
		const [report] = await runWithHostPaused([`for i in range(${lines}):\n    print(f"{i:08d} " + "x" * 91)`], 11_000);
		expect(report.status).toBe("ok");
		expect(report.lostOutputChars).toBeUndefined();
		expect(report.receivedChars).toBe(lines * 101);
		expect(report.fullOutputBytes).toBe(lines * 101);
		expect(report.fileTail.endsWith(`${String(lines - 1).padStart(8, "0")} ${"x".repeat(91)}\n`)).toBe(true);
	});

	it("keeps every line of 30,000 small flushed prints through a 6 s pause (paced by messages, not only characters)", {
		timeout: 90_000,
	}, async () => {
		const [report] = await runWithHostPaused(['for i in range(30_000):\n    print("y" * 40, flush=True)'], 6_000);
		expect(report.status).toBe("ok");
		expect(report.lostOutputChars).toBeUndefined();
		expect(report.receivedChars).toBe(30_000 * 41);
	});

	it("says how much output never arrived when messages bypassing flow control were dropped, and paces the next cells as before", {
		timeout: 90_000,
	}, async () => {
		const messages = 20_000;
		const flood = [
			"import time",
			"print('start', flush=True)",
			"time.sleep(1)",
			"k = get_ipython().kernel",
			`for _ in range(${messages}):`,
			"    k.session.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'y' * 1000 + '\\n'}, parent=k.get_parent('shell'))",
		].join("\n");
		const afterwards = 'for i in range(5_000):\n    print("z" * 200, flush=True)';
		const [report, next] = await runWithHostPaused([flood, afterwards, afterwards], 4_000);
		const sent = "start\n".length + messages * 1001;
		expect(report.lostOutputChars).toBeGreaterThan(0);
		expect(report.receivedChars + (report.lostOutputChars ?? 0)).toBe(sent);
		const note = `[... ${report.lostOutputChars} characters of output were sent by the kernel but never reached the host: this output is incomplete ...]\n`;
		expect(report.stderr.endsWith(note)).toBe(true);
		expect(report.fileTail.endsWith(note)).toBe(true);
		expect(next.status).toBe("ok");
		expect(next.receivedChars).toBe(5_000 * 201);
	});
});
