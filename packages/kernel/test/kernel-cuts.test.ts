import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { Subscriber } from "zeromq";
import { channelAddress } from "../src/connection/connection-file.js";
import { type Kernel, TRUNCATION_MARKER } from "../src/index.js";
import { remote, scratchDir, sharedKernel, startKernel, testServer, wholeText } from "./kernels.js";

/**
 * Errors, results and displays over the visible cap are cut in the kernel before they are sent:
 * what arrives is bounded, says what was cut, and the whole is in a file.
 */
const scratch = scratchDir("kernel-cuts-");
const kernel = sharedKernel(() => ({ outputDir: join(scratch(), "shared") }));

/** The largest message any iopub subscriber gets should stay near the cap (64 Ki characters), never megabytes. */
const MESSAGE_BOUND = 200_000;

/**
 * A second client on the kernel's iopub socket (from its connection file, as any Jupyter client
 * would connect): records the size of every message published, so a test sees what went on the wire.
 */
async function iopubSizes(target: Kernel): Promise<{ sizes: Map<string, number>; close: () => void }> {
	if (remote) return serverIopubSizes(target);
	const args = readFileSync(`/proc/${target.pid}/cmdline`, "utf8").split("\0");
	const info = JSON.parse(readFileSync(args[args.indexOf("-f") + 1], "utf8"));
	const socket = new Subscriber({ linger: 0 });
	socket.subscribe();
	socket.connect(channelAddress(info, info.iopub_port));
	const sizes = new Map<string, number>();
	void (async () => {
		try {
			for await (const frames of socket) {
				const at = frames.findIndex((frame) => frame.toString() === "<IDS|MSG>");
				const type = JSON.parse(frames[at + 2].toString()).msg_type as string;
				const size = frames.reduce((sum, frame) => sum + frame.length, 0);
				sizes.set(type, Math.max(sizes.get(type) ?? 0, size));
			}
		} catch {
			// Closed.
		}
	})();
	// A subscription joins late: wait until it sees a cell's messages.
	while (!sizes.has("status")) await target.execute("pass");
	return { sizes, close: () => socket.close() };
}

/**
 * The same for a kernel on a Jupyter Server: a second client on its `channels` WebSocket, which
 * carries each message as one JSON text frame.
 */
async function serverIopubSizes(target: Kernel): Promise<{ sizes: Map<string, number>; close: () => void }> {
	const location = target.location;
	if (location.kind !== "jupyter-server") throw new Error("not a kernel on a server");
	const { url, token } = testServer();
	const socket = new WebSocket(`${url.replace(/^http/, "ws")}/api/kernels/${location.kernelId}/channels`, {
		headers: { Authorization: `token ${token}` },
	});
	const sizes = new Map<string, number>();
	socket.on("message", (data: Buffer) => {
		const message = JSON.parse(data.toString()) as { channel?: string; header?: { msg_type?: string } };
		const type = message.header?.msg_type;
		if (message.channel === "iopub" && type) sizes.set(type, Math.max(sizes.get(type) ?? 0, data.length));
	});
	await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
	while (!sizes.has("status")) await target.execute("pass");
	return { sizes, close: () => socket.close() };
}

let sniffer: Awaited<ReturnType<typeof iopubSizes>> | undefined;
afterAll(() => sniffer?.close());

/** The shared kernel, watched from a second client whose record starts afresh for each test. */
async function watchedKernel(): Promise<Kernel> {
	sniffer ??= await iopubSizes(kernel());
	sniffer.sizes.clear();
	return kernel();
}

/**
 * The largest `type` message the second client got in this test. It reads on its own socket, so
 * it may get the message after the host did: waited for (a message it never gets fails the test).
 */
async function largest(type: string): Promise<number | undefined> {
	for (const deadline = Date.now() + 20_000; !sniffer?.sizes.has(type) && Date.now() < deadline; ) {
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
	return sniffer?.sizes.get(type);
}

/** Kernel files left in the shared output folder (they are merged into the complete output and removed). */
function kernelFilesLeft(kind: "error" | "result"): string[] {
	return readdirSync(join(scratch(), "shared")).filter(
		(name) => name.startsWith("kernel-") && name.includes(`.${kind}.`),
	);
}

describe("output cut at its source", () => {
	it("cuts a 20 MB traceback in the kernel, says what was cut, and keeps the whole in the complete-output file", async () => {
		const k = await watchedKernel();
		const result = await k.execute("raise ValueError('E' * 20_000_000 + 'END')");
		expect(result.status).toBe("error");
		expect(result.truncated.error).toBe(true);
		expect(result.error?.evalue).toBe(`${"E".repeat(65_536)}\n[... 19934467 chars truncated ...]`);
		// "ValueError: " and the message: 20,000,015 characters, of which 16,384 (a quarter of the cap) are shown.
		expect(result.error?.traceback.at(-1)).toBe(
			`ValueError: ${"E".repeat(16_372)}\n[... 19983631 chars truncated ...]`,
		);
		const complete = readFileSync(result.fullOutputPath as string, "utf8");
		expect(wholeText(complete).endsWith(`ValueError: ${"E".repeat(20_000_000)}END`)).toBe(true);
		expect(result.fullOutputBytes).toBe(Buffer.byteLength(complete));
		expect(kernelFilesLeft("error")).toEqual([]);
		expect(await largest("error")).toBeLessThan(MESSAGE_BOUND);
	});

	it("cuts a 20 MB display's text in the kernel, names the file holding it, and the print after it arrives", async () => {
		const k = await watchedKernel();
		const result = await k.execute(
			"from IPython.display import display\ndisplay({'text/plain': 'x' * 20_000_000}, raw=True)\nprint('after')",
		);
		expect(result.status).toBe("ok");
		expect(result.stdout).toBe("after\n");
		expect(result.displays.length).toBe(1);
		const [display] = result.displays;
		const saved = display.saved?.[0];
		expect(display.saved?.length).toBe(1);
		expect(saved?.mimeType).toBe("text/plain");
		expect(saved?.chars).toBe(20_000_000);
		expect(saved?.bytes).toBe(20_000_000);
		expect(dirname(saved?.path as string)).toBe(remote ? kernelFolder(saved?.path) : join(scratch(), "shared"));
		expect(basename(saved?.path as string)).toMatch(/^kernel-[0-9a-f]{8}\.display\.txt$/);
		expect(display.data).toEqual({
			"text/plain": `${"x".repeat(65_536)}\n${TRUNCATION_MARKER}\n[... text/plain of 20000000 characters, too large to show, saved to ${saved?.path} ...]`,
		});
		expect(readFileSync(saved?.path as string, "utf8")).toBe("x".repeat(20_000_000));
		expect(await largest("display_data")).toBeLessThan(MESSAGE_BOUND);
	});

	it("saves a large image as the image file and says its type and size", async () => {
		const k = await watchedKernel();
		const result = await k.execute(
			"from IPython.display import Image, display\npng = b'\\x89PNG\\r\\n\\x1a\\n' + bytes(range(256)) * 12_000\ndisplay(Image(data=png))",
		);
		const png = Buffer.concat([Buffer.from("\x89PNG\r\n\x1a\n", "latin1"), Buffer.alloc(256 * 12_000, 0)]);
		for (let i = 8; i < png.length; i++) png[i] = (i - 8) % 256;
		const [display] = result.displays;
		const path = display.saved?.[0].path as string;
		expect(path.endsWith(".display.png")).toBe(true);
		expect(readFileSync(path).equals(png)).toBe(true);
		expect(display.data["text/plain"]).toBe(
			`<IPython.core.display.Image object>\n[... image/png of 3072008 bytes, too large to show, saved to ${path} ...]`,
		);
		expect(display.saved).toEqual([{ mimeType: "image/png", chars: 4_096_012, path, bytes: 3_072_008 }]);
		expect(await largest("display_data")).toBeLessThan(MESSAGE_BOUND);
	});

	it("cuts a 20 MB result in the kernel and keeps its whole text in the complete-output file", async () => {
		const k = await watchedKernel();
		const result = await k.execute("'r' * 20_000_000");
		expect(result.truncated.result).toBe(true);
		expect(result.result).toBe(`'${"r".repeat(65_535)}\n${TRUNCATION_MARKER}`);
		expect(wholeText(readFileSync(result.fullOutputPath as string, "utf8"))).toBe(`'${"r".repeat(20_000_000)}'`);
		expect(kernelFilesLeft("result")).toEqual([]);
		expect(await largest("execute_result")).toBeLessThan(MESSAGE_BOUND);
	});

	// A kernel on a server saves to a folder of its own machine, never to the host's outputDir.
	it.skipIf(remote)("says a part it could not save is lost, and keeps the cell's own error", async () => {
		const outputDir = join(scratch(), "blocked");
		await writeFile(outputDir, "a file where the output folder should be");
		const k = await startKernel({ outputDir });
		const shown = await k.execute(
			"from IPython.display import display\ndisplay({'text/html': 'h' * 100_000}, raw=True)",
		);
		const reason = `EEXIST: File exists, '${outputDir}'`;
		expect(shown.status).toBe("error");
		expect(shown.error?.ename).toBe("OutputFileError");
		expect(shown.error?.evalue.startsWith(`The kernel could not save the text/html of a display (${reason})`)).toBe(
			true,
		);
		expect(shown.displays[0].data).toEqual({
			"text/plain": `[... text/html of 100000 characters, too large to show, could not be saved (${reason}) ...]`,
		});
		const raised = await k.execute("raise KeyError('k' * 100_000)");
		expect(raised.error?.ename).toBe("KeyError");
		expect(raised.error?.evalue.endsWith("[... 34466 chars truncated ...]")).toBe(true);
		expect(raised.stderr).toContain(`The kernel could not save the whole error (${reason})`);
		expect(raised.fullOutputPath).toBeUndefined();
	});

	// A Jupyter Server parses each message itself: one it cannot read never reaches the host.
	it.skipIf(remote)("says when a message of the cell arrived but could not be read", async () => {
		const k = await watchedKernel();
		// A display whose signed content is not JSON, as a message too large to decode arrives.
		const result = await k.execute(
			[
				"k = get_ipython().kernel",
				"frames = k.session.serialize(k.session.msg('display_data', {}, parent=k.get_parent()))",
				"frames[5] = b'{not json'",
				"frames[1] = k.session.sign(frames[2:6])",
				"k.iopub_socket.send_multipart([b'display_data', *frames])",
				"print('after')",
			].join("\n"),
		);
		expect(result.stdout).toBe("after\n");
		expect(result.displays).toEqual([]);
		expect(result.stderr).toMatch(
			/^\[\.\.\. a display_data message of this cell could not be read \(9 bytes: .+\) and is missing from this output \.\.\.\]\n$/,
		);
	});

	it("does not keep what a cell printed once it is done", async () => {
		const k = await startKernel();
		const rss = async () => Number((await k.execute(RSS_MIB)).result);
		await k.execute("print('warm up')");
		const before = await rss();
		// 40 distinct 1 MiB strings, as a real program prints (IPython's history would keep each).
		await k.execute("import sys\nfor i in range(40): sys.stdout.write((f'{i:07d}' + 'x' * 1016 + '\\n') * 1024)");
		expect((await rss()) - before).toBeLessThan(20);
	});
});

/** The folder a kernel on a server saves to: a private temp folder of its bootstrap, `.../outputs`. */
function kernelFolder(path: string | undefined): string {
	const folder = dirname(path ?? "");
	expect(folder).toMatch(/\/prime-remote-kernel-\d+-[^/]+\/outputs$/);
	return folder;
}

const RSS_MIB = "int(next(l for l in open('/proc/self/status') if l.startswith('VmRSS')).split()[1]) // 1024";
