import { describe, expect, it } from "vitest";
import { Kernel } from "../src/index.js";
import { startJupyterServer } from "./jupyter-server.js";

/** 3 MiB printed at once: three times what Jupyter Server's default limit passes in its 3 s window. */
const PRINT = "import sys\n_ = sys.stdout.write(('x' * 1023 + '\\n') * 3 * 1024)";
const BYTES = 3 * 1024 * 1024;

/** Runs PRINT on a fresh loopback server started with `rateLimits`; everything is stopped after. */
async function printOnServer(rateLimits: boolean) {
	const server = await startJupyterServer({ rateLimits });
	try {
		const kernel = await Kernel.start({ jupyterServer: server.options(), readyTimeoutMs: 120_000 });
		try {
			return await kernel.execute(PRINT);
		} finally {
			await kernel.shutdown();
		}
	} finally {
		await server.stop();
	}
}

// The conformance tests' and the benchmark's output figures rest on the loopback server passing
// all output; the server's defaults drop it, and the lost-output accounting says so.
describe("the loopback Jupyter Server's iopub rate limits", () => {
	it("are off by default: a 3 MiB print arrives whole", async () => {
		const result = await printOnServer(false);
		expect(result.status).toBe("ok");
		expect(result.fullOutputBytes).toBe(BYTES);
		expect(result.lostOutputChars).toBeUndefined();
		expect(result.stderr).toBe("");
	}, 300_000);

	it("with rateLimits the server's defaults replace the print with its notice, reported lost", async () => {
		const result = await printOnServer(true);
		expect(result.status).toBe("ok");
		expect(result.stdout).toBe("");
		expect(result.stderr.startsWith("IOPub data rate exceeded.\n")).toBe(true);
		// The server's notice comes as a stream message of the cell: the accounting counts it as
		// output that arrived, so the loss it reports is the print less the notice's length.
		const notice = result.stderr.slice(0, result.stderr.indexOf("[... "));
		expect(result.lostOutputChars).toBe(BYTES - notice.length);
	}, 300_000);
});
