import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kernel } from "../src/index.js";
import { startJupyterServer, type TestJupyterServer } from "./jupyter-server.js";

let server: TestJupyterServer;
beforeAll(async () => {
	server = await startJupyterServer();
}, 240_000);
afterAll(async () => {
	await server?.stop();
});

describe("a kernel on a Jupyter Server", () => {
	it("runs cells with streams, results and errors, and is deleted on shutdown", async () => {
		const kernel = await Kernel.start({ jupyterServer: server.options() });
		try {
			const result = await kernel.execute("import os\nprint('hi'); x = 41\nx + 1");
			expect(result.status).toBe("ok");
			expect(result.stdout).toBe("hi\n");
			expect(result.result).toBe("42");
			const error = await kernel.execute("1/0");
			expect(error.status).toBe("error");
			expect(error.error?.ename).toBe("ZeroDivisionError");
			expect(kernel.location.kind).toBe("jupyter-server");
		} finally {
			await kernel.shutdown();
		}
		const listed = await fetch(`${server.url}/api/kernels`, { headers: { Authorization: `token ${server.token}` } });
		expect(await listed.json()).toEqual([]);
	});
});
