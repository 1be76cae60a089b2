import { describe, expect, it } from "vitest";
import { Kernel } from "../src/index.js";
import { startJupyterServer } from "./jupyter-server.js";

/** 3 MiB printed at once: three times what Jupyter Server's default limit passes in its 3 s window. */
const PRINT = "import sys\n_ = sys.stdout.write(('x' * 1023 + '\\n') * 3 * 1024)";
const BYTES = 3 * 1024 * 1024;

/** Runs PRINT on a fresh loopback server with the default options; everything is stopped after. */
async function printOnServer() {
	const server = await startJupyterServer();
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
// all output (with `rateLimits` it drops it: see on-jupyter-server.test.ts).
describe("the loopback Jupyter Server's iopub rate limits", () => {
	it("are off by default: a 3 MiB print arrives whole", async () => {
		const result = await printOnServer();
		expect(result.status).toBe("ok");
		expect(result.fullOutputBytes).toBe(BYTES);
		expect(result.lostOutputChars).toBeUndefined();
		expect(result.stderr).toBe("");
	}, 300_000);
});
