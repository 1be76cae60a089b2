import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { formatCellOutput, type Kernel, TRUNCATION_MARKER, VISIBLE_OUTPUT_CAP } from "../src/index.js";
import { remote, runUntilPrinted, scratchDir, sharedKernel } from "./kernels.js";

const scratch = scratchDir("kernel-exec-test-");
const shared = sharedKernel(() => ({ outputDir: scratch() }));
let kernel: Kernel;
let outputDir: string;

beforeAll(() => {
	kernel = shared();
	outputDir = scratch();
});

describe("executing cells", () => {
	it("keeps variables from one cell to the next", async () => {
		await kernel.execute("counter = 40");
		const result = await kernel.execute("counter += 2\ncounter");
		expect(result.status).toBe("ok");
		expect(result.result).toBe("42");
	});

	it("keeps the output history, so _ and Out hold earlier results", async () => {
		const first = await kernel.execute("6 * 7");
		const again = await kernel.execute(`(_, Out[${first.executionCount}])`);
		expect(again.result).toBe("(42, 42)");
	});

	it("keeps stdout, stderr and the execution result apart", async () => {
		const result = await kernel.execute("import sys\nprint('to out')\nprint('to err', file=sys.stderr)\n'value'");
		expect(result.stdout).toBe("to out\n");
		expect(result.stderr).toBe("to err\n");
		expect(result.result).toBe("'value'");
		expect(formatCellOutput(result)).toBe("to out\nto err\n'value'");
	});

	it("reports an exception with its name, value and a plain traceback", async () => {
		const result = await kernel.execute("def f():\n    raise ValueError('bad input 7')\nf()");
		expect(result.status).toBe("error");
		expect(result.error?.ename).toBe("ValueError");
		expect(result.error?.evalue).toBe("bad input 7");
		const traceback = result.error?.traceback.join("\n") ?? "";
		expect(traceback).toContain("raise ValueError('bad input 7')");
		expect(traceback).not.toContain("\u001b[");
		expect(formatCellOutput(result)).toContain("ValueError: bad input 7");
	});

	it("collects the output of a forked subprocess (its pipe to the kernel is a private Unix socket)", async () => {
		const result = await kernel.execute(
			"import multiprocessing\nchild = multiprocessing.get_context('fork').Process(target=print, args=('from the child',))\nchild.start(); child.join()\nchild.exitcode",
		);
		expect(result.stdout).toBe("from the child\n");
		expect(result.result).toBe("0");
	});

	it("runs %%bash cells and shell escapes, collecting their output", async () => {
		const bash = await kernel.execute("%%bash\necho from bash\necho to err >&2");
		expect(bash.stdout).toBe("from bash\n");
		expect(bash.stderr).toBe("to err\n");
		// IPython runs `!` commands on a pseudo-terminal, hence the carriage return.
		expect((await kernel.execute("!echo from shell")).stdout).toMatch(/^from shell\r?\n$/);
	});

	it("ends a %%bash cell that started a background process with its output sent to a file (as the system prompt advises)", async () => {
		const log = join(scratch(), "server.log");
		const cell = await kernel.execute(
			`%%bash\nsetsid nohup bash -c 'echo serving; exec sleep 300' > ${log} 2>&1 &\necho $! > ${log}.pid\necho started`,
		);
		expect(cell.stdout).toBe("started\n");
		const pid = Number((await readFile(`${log}.pid`, "utf8")).trim());
		// Still running after the cell ended: the background process outlives it.
		expect(() => process.kill(pid, 0)).not.toThrow();
		process.kill(pid, "SIGKILL");
	});

	it("runs top-level await", async () => {
		const result = await kernel.execute("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'");
		expect(result.result).toBe("'awaited'");
	});

	it("runs queued cells one at a time, in order", async () => {
		await kernel.execute("order = []");
		const cells = [0, 1, 2, 3, 4].map((i) => kernel.execute(`import time\ntime.sleep(0.01)\norder.append(${i})`));
		await Promise.all(cells);
		expect((await kernel.execute("order")).result).toBe("[0, 1, 2, 3, 4]");
	});

	it("hands stream chunks to onStream as they arrive, while the cell still runs", async () => {
		// The cell waits for a file that the test creates only once the first chunk reached it: if
		// chunks were held back until the cell ended, the cell would give up and raise.
		const go = join(outputDir, "go");
		const chunks: string[] = [];
		const result = await kernel.execute(
			`import os, time\nprint('early', flush=True)\nfor _ in range(1000):\n    if os.path.exists(${JSON.stringify(go)}): break\n    time.sleep(0.01)\nelse:\n    raise TimeoutError('the first chunk never reached the host')\nprint('late')`,
			{
				onStream: (chunk) => {
					chunks.push(`${chunk.name}:${chunk.text}`);
					if (chunk.text.includes("early")) void writeFile(go, "");
				},
			},
		);
		expect(result.status).toBe("ok");
		expect(chunks).toEqual(["stdout:early\n", "stdout:late\n"]);
	});

	it("caps a 5 MB print with the exact marker and keeps every byte in the full-output file", async () => {
		const result = await kernel.execute(
			"import sys\nline = 'x' * 99 + '\\n'\nfor i in range(50_000): sys.stdout.write(f'{i:06d}' + line[6:])\nprint('bye', file=sys.stderr)",
		);
		expect(result.status).toBe("ok");
		expect(result.truncated.stdout).toBe(true);
		expect(result.stdout.endsWith(`\n${TRUNCATION_MARKER}`)).toBe(true);
		expect(result.stdout.length).toBe(VISIBLE_OUTPUT_CAP + 1 + TRUNCATION_MARKER.length);
		expect(result.stderr).toBe("bye\n");
		expect(result.fullOutputPath).toBeDefined();
		const full = await readFile(result.fullOutputPath as string, "utf8");
		let expected = "";
		for (let i = 0; i < 50_000; i++) expected += `${String(i).padStart(6, "0")}${"x".repeat(93)}\n`;
		expect(full).toBe(formatCellOutput({ stdout: expected, stderr: "bye\n" }));
		expect(result.fullOutputBytes).toBe(Buffer.byteLength(full));
		expect((await stat(result.fullOutputPath as string)).mode & 0o777).toBe(0o600);
	});

	it("receives a huge single print in messages of at most 64 Ki characters", async () => {
		let largest = 0;
		let total = 0;
		const result = await kernel.execute("print('y' * 3_000_000, end='')", {
			onStream: (chunk) => {
				largest = Math.max(largest, chunk.text.length);
				total += chunk.text.length;
			},
		});
		expect(total).toBe(3_000_000);
		expect(largest).toBeLessThanOrEqual(64 * 1024);
		expect(result.fullOutputBytes).toBe(3_000_000);
	});

	it("collects display_data apart from the execution result", async () => {
		const result = await kernel.execute("from IPython.display import display\ndisplay('shown')\n'returned'");
		expect(result.displays.map((display) => display.data["text/plain"])).toEqual(["'shown'"]);
		expect(result.result).toBe("'returned'");
	});

	it("keeps no full-output file for a small output", async () => {
		const result = await kernel.execute("print('small')");
		expect(result.fullOutputPath).toBeUndefined();
		expect(result.fullOutputBytes).toBe(6);
	});

	it("interrupts an endless loop within 2 seconds and keeps the variables", async () => {
		await kernel.execute("survivor = 'still here'");
		const controller = new AbortController();
		const cell = runUntilPrinted(kernel, "print('spinning', flush=True)\nwhile True: pass", "spinning", {
			signal: controller.signal,
		});
		await cell.started;
		const abortedAt = Date.now();
		controller.abort();
		const result = await cell.result;
		expect(Date.now() - abortedAt).toBeLessThan(2_000);
		expect(result.status).toBe("aborted");
		expect(result.error?.ename).toBe("KeyboardInterrupt");
		expect((await kernel.execute("survivor")).result).toBe("'still here'");
	});

	// Signatures are checked on the local wire; on a server the host holds no key (the server
	// passes the kernel's messages through), and what the kernel itself sends is its own output.
	it.skipIf(remote)("drops a message with a forged signature and counts it", async () => {
		const before = kernel.droppedMessages;
		// Publish, from inside the kernel, a stream message for this very cell signed with a wrong key.
		const result = await kernel.execute(
			[
				"import json, hmac, hashlib, uuid",
				"k = get_ipython().kernel",
				"parent = k.get_parent('shell')['header']",
				"header = dict(parent, msg_id=uuid.uuid4().hex, msg_type='stream')",
				"parts = [json.dumps(p, default=str).encode() for p in (header, parent, {}, {'name': 'stdout', 'text': 'FORGED'})]",
				"sig = hmac.new(b'not-the-key', b''.join(parts), hashlib.sha256).hexdigest().encode()",
				"k.iopub_socket.send_multipart([b'stream.stdout', b'<IDS|MSG>', sig, *parts])",
				"import time; time.sleep(0.2)",
				"print('genuine')",
			].join("\n"),
		);
		expect(result.stdout).toBe("genuine\n");
		expect(kernel.droppedMessages).toBe(before + 1);
	});
});
