import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cannotMount, mountSmallDisk, type SmallDisk, tempFilesUnder } from "prime-agent-test-support/small-disk";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_QUEUE_FILE_BYTES, QUEUE_FILE, QueueFile } from "../src/daemon/queue-file.js";

let dir: string | undefined;
let disk: SmallDisk | undefined;
afterEach(() => {
	disk?.unmount();
	disk = undefined;
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = undefined;
});

/** A queue file in a fresh folder, and the lines it logs. */
function queueFile(): { file: QueueFile; path: string; log: string[] } {
	dir = mkdtempSync(join(tmpdir(), "prime-queue-file-"));
	const path = join(dir, QUEUE_FILE);
	const log: string[] = [];
	return { file: new QueueFile(path, (line) => log.push(line)), path, log };
}

describe("a worker's queue file", () => {
	it("keeps the kinds and texts in order, user-only, and goes when the queue is empty", () => {
		const { file, path, log } = queueFile();
		expect(file.read()).toEqual([]);
		const queued = [
			{ kind: "follow_up" as const, text: "then write it up" },
			{ kind: "prompt" as const, text: "/goal ship it" },
			{ kind: "steer" as const, text: "also check y\nand z" },
		];
		file.write(queued);
		expect(statSync(path).mode & 0o777).toBe(0o600);
		expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ version: 1, items: queued });
		expect(file.read()).toEqual(queued);
		file.write([]);
		expect(existsSync(path)).toBe(false);
		expect(file.read()).toEqual([]);
		expect(log).toEqual([]);
	});

	it("ignores a torn file whole (a write cut by kill -9), with a line in the log and without quoting it", () => {
		const { file, path, log } = queueFile();
		file.write([
			{ kind: "prompt", text: "first" },
			{ kind: "prompt", text: "second, cut" },
		]);
		const whole = readFileSync(path, "utf8");
		writeFileSync(path, whole.slice(0, whole.indexOf("second") + 6));
		expect(file.read()).toEqual([]);
		expect(log).toEqual([
			`The queue file ${path} was ignored (Unterminated string at line 10, column 19); nothing in it runs.`,
		]);
	});

	it("ignores hostile content whole: wrong types, NUL characters, no list, a huge file", () => {
		const { file, path, log } = queueFile();
		const ignoring = (content: string | Buffer, why: string) => {
			writeFileSync(path, content);
			log.length = 0;
			expect(file.read()).toEqual([]);
			expect(log).toEqual([`The queue file ${path} was ignored (${why}); nothing in it runs.`]);
		};
		const badItem = (n: number) =>
			`item ${n} is not a steer, follow_up or prompt with a text (not empty, without NUL characters)`;
		const items = (...list: unknown[]) => JSON.stringify({ version: 1, items: list });
		ignoring(items({ kind: "prompt", text: "fine" }, { kind: "prompt", text: 42 }), badItem(2));
		ignoring(items({ kind: "rm -rf", text: "x" }), badItem(1));
		ignoring(items({ kind: "prompt", text: { toString: "x" } }), badItem(1));
		ignoring(items({ kind: "prompt", text: "" }), badItem(1));
		ignoring(items(null), badItem(1));
		ignoring(items({ kind: "steer", text: "a\u0000b" }), badItem(1));
		ignoring(
			Buffer.from('{"items":[{"kind":"prompt","text":"a\0b"}]}'),
			"Bad control character in string literal at line 1, column 37",
		);
		ignoring('{"items":{"0":{"kind":"prompt","text":"x"}}}', "it holds no list of items");
		ignoring("null", "it holds no list of items");
		ignoring('[{"kind":"prompt","text":"x"}]', "it holds no list of items");
		// A sparse file: larger than a queue file may be, read no further than its size.
		writeFileSync(path, "");
		truncateSync(path, MAX_QUEUE_FILE_BYTES + 1);
		log.length = 0;
		expect(file.read()).toEqual([]);
		expect(log).toEqual([
			`The queue file ${path} was ignored (it is ${MAX_QUEUE_FILE_BYTES + 1} bytes, more than the ${MAX_QUEUE_FILE_BYTES} a queue file may hold); nothing in it runs.`,
		]);
	});

	it("makes no folder of an agent that was removed", () => {
		const { file, path } = queueFile();
		rmSync(dir as string, { recursive: true });
		file.write([{ kind: "prompt", text: "x" }]);
		expect(existsSync(path)).toBe(false);
	});
});

describe.skipIf(cannotMount !== undefined)(`a full disk${cannotMount ? ` (skipped: ${cannotMount})` : ""}`, () => {
	it("a queue write the disk refuses is logged, and the out-of-date file goes: nothing that ran meanwhile runs again", () => {
		dir = mkdtempSync(join(tmpdir(), "prime-queue-disk-"));
		disk = mountSmallDisk(dir);
		const path = join(dir, QUEUE_FILE);
		const log: string[] = [];
		const file = new QueueFile(path, (line) => log.push(line));
		file.write([{ kind: "prompt", text: "first" }]);
		disk.fill();
		expect(() => file.write([{ kind: "prompt", text: "x".repeat(20_000) }])).not.toThrow();
		expect(log).toEqual([
			`Could not write this worker's queue (1 queued): No space left on ${dir} (tmpfs, 0 bytes free): ${path} could not be written. A crash now loses what is queued.`,
		]);
		expect(existsSync(path)).toBe(false);
		expect(tempFilesUnder(dir)).toEqual([]);
		// Space back: the next change is kept again.
		disk.free();
		file.write([{ kind: "follow_up", text: "later" }]);
		expect(file.read()).toEqual([{ kind: "follow_up", text: "later" }]);
	});
});
