import { beforeAll, describe, expect, it } from "vitest";
import { sharedKernel, startKernel } from "./kernels.js";

const shared = sharedKernel({ startupCode: "from prime_kernel import host_request" });
let kernel: ReturnType<typeof shared>;

beforeAll(() => {
	kernel = shared();
	kernel.onHostRequest("echo", (payload) => ({ echoed: payload }));
	kernel.onHostRequest("double", async (payload) => {
		await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
		return { value: (payload.n as number) * 2 };
	});
	kernel.onHostRequest("explode", () => {
		throw new Error("handler blew up on purpose");
	});
});

describe("host requests", () => {
	it("answers a request awaited by a cell", async () => {
		const result = await kernel.execute("reply = await host_request('echo', {'path': 'a.txt', 'n': 3})\nreply");
		expect(result.status).toBe("ok");
		expect(result.result).toBe("{'echoed': {'path': 'a.txt', 'n': 3}, 'status': 'ok'}");
	});

	it("routes by the type argument even when the payload carries its own type key", async () => {
		const result = await kernel.execute("(await host_request('echo', {'type': 'explode', 'x': 1}))['echoed']");
		expect(result.result).toBe("{'x': 1}");
	});

	it("answers 20 concurrent requests made from one cell", async () => {
		const result = await kernel.execute(
			"import asyncio\nreplies = await asyncio.gather(*(host_request('double', {'n': i}) for i in range(20)))\n[r['value'] for r in replies]",
		);
		expect(result.result).toBe(`[${Array.from({ length: 20 }, (_, i) => i * 2).join(", ")}]`);
	});

	it("answers a request from a task that outlived the cell that started it", async () => {
		let requested!: () => void;
		const seen = new Promise<void>((resolve) => {
			requested = resolve;
		});
		const unregister = kernel.onHostRequest("late", (payload) => {
			requested();
			return { ok: payload.step };
		});
		try {
			const first = await kernel.execute(
				"import asyncio\nasync def later():\n    await asyncio.sleep(0.3)\n    return await host_request('late', {'step': 2})\ntask = asyncio.ensure_future(later())\n'started'",
			);
			expect(first.result).toBe("'started'");
			await seen;
			const second = await kernel.execute("await task");
			expect(second.result).toBe("{'ok': 2, 'status': 'ok'}");
		} finally {
			unregister();
		}
	});

	it("sends an error reply when the handler throws", async () => {
		const result = await kernel.execute("await host_request('explode', {})");
		expect(result.result).toBe("{'status': 'error', 'error': 'handler blew up on purpose'}");
	});

	it("sends an error reply naming the known types for an unknown type", async () => {
		const result = await kernel.execute(
			"r = await host_request('no.such.type', {})\nprint(r['status'])\nprint(r['error'])",
		);
		expect(result.stdout).toBe(
			'error\nno host handler for request type "no.such.type" (known types: double, echo, explode)\n',
		);
	});

	it("sends a plain value as the reply's value field", async () => {
		const unregister = kernel.onHostRequest("plain", () => "just text");
		try {
			expect((await kernel.execute("await host_request('plain')")).result).toBe(
				"{'status': 'ok', 'value': 'just text'}",
			);
		} finally {
			unregister();
		}
	});

	it("sends an error reply when the handler's answer cannot be encoded as JSON", async () => {
		const unregister = kernel.onHostRequest("unencodable", () => ({ big: 10n }));
		try {
			const result = await kernel.execute("r = await host_request('unencodable')\nprint(r['status'])");
			expect(result.stdout).toBe("error\n");
		} finally {
			unregister();
		}
	});

	it("stops answering a type once its handler is unregistered", async () => {
		const unregister = kernel.onHostRequest("temporary", () => ({ here: true }));
		expect((await kernel.execute("(await host_request('temporary'))['status']")).result).toBe("'ok'");
		unregister();
		expect((await kernel.execute("(await host_request('temporary'))['status']")).result).toBe("'error'");
	});
});

describe("host requests that are never answered", () => {
	it("sends an error reply once the handler has taken longer than hostRequestTimeoutMs", async () => {
		const kernel = await startKernel({
			startupCode: "from prime_kernel import host_request",
			hostRequestTimeoutMs: 300,
		});
		kernel.onHostRequest("never", () => new Promise(() => {}));
		const result = await kernel.execute("print((await host_request('never', {}))['error'])");
		expect(result.stdout).toBe('the host\'s handler for "never" did not answer within 0.3 s (hostRequestTimeoutMs)\n');
	});

	it("raises HostRequestTimeout in Python when no reply comes within its timeout", async () => {
		const kernel = await startKernel({ startupCode: "from prime_kernel import host_request" });
		kernel.onHostRequest("never", () => new Promise(() => {}));
		const result = await kernel.execute("await host_request('never', {}, timeout=0.3)");
		expect(result.status).toBe("error");
		expect(result.error?.ename).toBe("HostRequestTimeout");
		expect(result.error?.evalue).toBe(
			"the host sent no reply to request 'never' within 0.3 s; it may be stopped or busy. Retry, or pass a longer timeout= to host_request.",
		);
		expect((await kernel.execute("'still usable'")).result).toBe("'still usable'");
	});
});

describe("what execute accepts", () => {
	it("rejects code that is not a string at once, and the queue goes on", async () => {
		await expect(kernel.execute(undefined as unknown as string)).rejects.toThrow(
			"execute(code) takes the cell's Python code as a string, not undefined.",
		);
		await expect(kernel.execute(42 as unknown as string)).rejects.toThrow("not a number.");
		expect((await kernel.execute("'next'")).result).toBe("'next'");
	});
});

describe("notifications", () => {
	it("runs the handler of notify_host from synchronous code, and sends nothing back", async () => {
		const kernel = await startKernel({ startupCode: "from prime_kernel import notify_host" });
		let heard!: (payload: Record<string, unknown>) => void;
		const received = new Promise<Record<string, unknown>>((resolve) => {
			heard = resolve;
		});
		kernel.onHostRequest("told", (payload) => heard(payload));
		const result = await kernel.execute("def hook():\n    notify_host('told', {'n': 5})\nhook()\n'returned at once'");
		expect(result.result).toBe("'returned at once'");
		expect(await received).toEqual({ n: 5 });
	});
});
