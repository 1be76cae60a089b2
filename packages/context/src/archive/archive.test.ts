import { mkdtemp, open, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ChunkedGzipWriter } from "./chunks.js";
import type { ObservationFacts, SessionArchive } from "./index.js";
import {
	ArchiveError,
	CHUNK_BYTES,
	copyObservations,
	defaultSessionId,
	openSessionArchive,
	resolveContextRoot,
} from "./index.js";

const facts: ObservationFacts = {
	tool: "run",
	source: "visible-tool-result",
	decision: "structured-capsule",
	isError: false,
	exitCode: 0,
	command: "echo",
};

let root: string;
let archive: SessionArchive;

beforeEach(async () => {
	root = await mkdtemp(join(tmpdir(), "pc-archive-"));
	archive = await openSessionArchive({ root, sessionId: "s1" });
});
afterEach(async () => {
	await rm(root, { recursive: true, force: true });
});

async function store(bytes: Buffer, pieces = 1): Promise<string> {
	const writer = await archive.create();
	const step = Math.max(1, Math.ceil(bytes.length / pieces));
	for (let at = 0; at < bytes.length; at += step) await writer.write(bytes.subarray(at, at + step));
	await writer.finish(facts);
	return writer.id;
}

/** The reference meaning of "lines": split on \n, a final \n ends the last line. */
function splitLines(bytes: Buffer): Buffer[] {
	if (bytes.length === 0) return [];
	const parts: Buffer[] = [];
	let start = 0;
	for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, start)) {
		parts.push(bytes.subarray(start, at));
		start = at + 1;
	}
	if (start < bytes.length) parts.push(bytes.subarray(start));
	return parts;
}

describe("storage root and session ids", () => {
	it("prefers PRIME_CONTEXT_HOME, then PRIME_AGENT_DIR, then the home directory", () => {
		expect(resolveContextRoot({ PRIME_CONTEXT_HOME: "/a/b" })).toBe("/a/b");
		expect(resolveContextRoot({ PRIME_AGENT_DIR: "/agent" })).toBe("/agent/prime-context");
		expect(resolveContextRoot({})).toMatch(/\.prime[/\\]agent[/\\]prime-context$/);
	});

	it("derives a stable, filesystem-safe session id per working directory", () => {
		const a = defaultSessionId("/tmp/my project!");
		expect(a).toBe(defaultSessionId("/tmp/my project!"));
		expect(a).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/);
		expect(a).not.toBe(defaultSessionId("/other/my project!"));
		expect(defaultSessionId("/")).toMatch(/^session-[0-9a-f]{12}$/);
		expect(defaultSessionId("/home/проект")).toMatch(/^session-[0-9a-f]{12}$/);
	});

	it("rejects session names that could escape the sessions directory", async () => {
		for (const bad of ["..", "../x", "a/b", "", ".hidden"]) {
			await expect(openSessionArchive({ root, sessionId: bad })).rejects.toThrow(ArchiveError);
		}
	});
});

describe("writing and reading observations", () => {
	it("hands out deterministic zero-padded ids in order", async () => {
		expect(await store(Buffer.from("a\n"))).toBe("obs_000001");
		expect(await store(Buffer.from("b\n"))).toBe("obs_000002");
		expect((await archive.list()).map((r) => r.id)).toEqual(["obs_000002", "obs_000001"]);
		expect((await archive.list(1)).map((r) => r.id)).toEqual(["obs_000002"]);
	});

	it("records the facts, byte and line counts of an observation", async () => {
		const id = await store(Buffer.from("one\ntwo\nthree"));
		const record = await archive.get(id);
		expect(record).toMatchObject({ id, tool: "run", bytes: 13, lines: 3, exitCode: 0, command: "echo", binary: false });
		expect(Date.parse(record.archivedAt)).not.toBeNaN();
	});

	it("archives empty output as zero lines in a valid gzip file", async () => {
		const id = await store(Buffer.alloc(0));
		expect(await archive.get(id)).toMatchObject({ bytes: 0, lines: 0, binary: false });
		expect(await archive.readBytes(id)).toEqual(Buffer.alloc(0));
		expect(await archive.readLines(id, 1, 80)).toMatchObject({ lines: [], totalLines: 0 });
		expect(gunzipSync(await readFile(join(archive.dir, id, "output.gz")))).toEqual(Buffer.alloc(0));
	});

	it("keeps binary and invalid UTF-8 byte-exact and marks them binary", async () => {
		const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe]);
		const id = await store(png);
		expect(await archive.readBytes(id)).toEqual(png);
		expect((await archive.get(id)).binary).toBe(true);
		const invalid = Buffer.concat([Buffer.from("ok line\n"), Buffer.from([0xc3, 0x28]), Buffer.from("\n")]);
		expect((await archive.get(await store(invalid))).binary).toBe(true);
	});

	it("detects UTF-8 validity across write boundaries that split a character", async () => {
		const text = Buffer.from("é€😀\n".repeat(1000));
		const id = await store(text, 777);
		expect((await archive.get(id)).binary).toBe(false);
		expect(await archive.readBytes(id)).toEqual(text);
		const cut = await store(Buffer.from("abc€").subarray(0, 5));
		expect((await archive.get(cut)).binary).toBe(true);
	});

	it("stores one file that is a single valid gzip stream made of line-aligned chunks", async () => {
		const line = `${"x".repeat(99)}\n`;
		const text = Buffer.from(line.repeat(5000)); // 500 KB
		const id = await store(text, 13);
		const file = await readFile(join(archive.dir, id, "output.gz"));
		expect(gunzipSync(file)).toEqual(text);
		const meta = JSON.parse(await readFile(join(archive.dir, id, "meta.json"), "utf8"));
		expect(meta.chunks.length).toBeGreaterThan(5);
		let at = 0;
		for (const chunk of meta.chunks) {
			expect(chunk.bytes).toBeLessThanOrEqual(CHUNK_BYTES);
			expect(chunk.bytes % line.length).toBe(0);
			expect(chunk.startsMidLine).toBe(false);
			// Every chunk is a gzip member of its own: it inflates alone to exactly its bytes.
			const member = gunzipSync(file.subarray(chunk.offset, chunk.offset + chunk.length));
			expect(member.equals(text.subarray(at, at + chunk.bytes))).toBe(true);
			at += chunk.bytes;
		}
		expect(at).toBe(text.length);
	});

	it("starts every chunk on a line boundary when the source arrives in exact 64 KiB pieces", async () => {
		const text = Buffer.from(
			Array.from({ length: 60_000 }, (_, i) => `log line ${i + 1} ${"y".repeat(i % 50)}`).join("\n"),
		);
		const writer = await archive.create();
		for (let at = 0; at < text.length; at += CHUNK_BYTES) await writer.write(text.subarray(at, at + CHUNK_BYTES));
		await writer.finish(facts);
		const meta = JSON.parse(await readFile(join(archive.dir, writer.id, "meta.json"), "utf8"));
		expect(meta.chunks.filter((chunk: { startsMidLine: boolean }) => chunk.startsMidLine).length).toBe(0);
		expect((await archive.readBytes(writer.id)).equals(text)).toBe(true);
		expect((await archive.readLines(writer.id, 59_999, 60_000)).lines).toEqual([
			`log line 59999 ${"y".repeat(59_998 % 50)}`,
			`log line 60000 ${"y".repeat(59_999 % 50)}`,
		]);
	});

	it("reads a line range from the middle of a large observation", async () => {
		const text = Buffer.from(Array.from({ length: 20000 }, (_, i) => `line ${i + 1}`).join("\n"));
		const id = await store(text, 3);
		const { lines, totalLines } = await archive.readLines(id, 12345, 12347);
		expect(totalLines).toBe(20000);
		expect(lines).toEqual(["line 12345", "line 12346", "line 12347"]);
		expect((await archive.readLines(id, 19999, 30000)).lines).toEqual(["line 19999", "line 20000"]);
		expect((await archive.readLines(id, 20001, 20002)).lines).toEqual([]);
	});

	it("handles a single 10 MB line spread over many chunks", async () => {
		const giant = Buffer.alloc(10 * 1024 * 1024, "g");
		const text = Buffer.concat([Buffer.from("before\n"), giant, Buffer.from("\nafter\n")]);
		const id = await store(text, 40);
		expect(await archive.get(id)).toMatchObject({ lines: 3, bytes: text.length });
		const { lines } = await archive.readLines(id, 2, 3);
		expect(lines[0].length).toBe(giant.length);
		expect(lines[1]).toBe("after");
		expect((await archive.readLines(id, 3, 3)).lines).toEqual(["after"]);
		expect((await archive.readBytes(id)).equals(text)).toBe(true);
	});

	it("clips giant lines and stops at a byte budget when asked, reporting full line sizes", async () => {
		const giant = "g".repeat(3 * CHUNK_BYTES);
		const id = await store(Buffer.from(`${giant}\nshort\n${giant}\n${giant}\n`), 9);
		const clipped = await archive.readLines(id, 1, 4, { maxLineBytes: 100 });
		expect(clipped.lines.map((l) => l.length)).toEqual([100, 5, 100, 100]);
		expect(clipped.lineBytes).toEqual([giant.length, 5, giant.length, giant.length]);
		const budgeted = await archive.readLines(id, 1, 4, { maxLineBytes: 1000, maxBytes: 1004 });
		expect(budgeted.lines.map((l) => l.length)).toEqual([1000, 5]);
	});

	it("streams every line in order", async () => {
		const id = await store(Buffer.from("a\r\nb\n\nc"));
		const seen: string[] = [];
		for await (const { line, text } of archive.lines(id)) seen.push(`${line}:${text}`);
		expect(seen).toEqual(["1:a\r", "2:b", "3:", "4:c"]);
	});

	it("streams each line as its own bytes decode, across chunks and characters cut between them", async () => {
		// Lines longer than a chunk (cut mid-line, inside a four-byte character), invalid and NUL bytes,
		// empty lines, and an output with and without a final newline.
		const long = "é😀".repeat(CHUNK_BYTES / 3);
		const cases = [
			Buffer.concat([
				Buffer.from(`start\n${long}\n\n`),
				Buffer.from([0xff, 0xc3, 0x0a, 0x00, 0x41]),
				Buffer.from(`\n${long}`),
			]),
			Buffer.from(`${"x".repeat(CHUNK_BYTES - 1)}\n${"y".repeat(CHUNK_BYTES)}\n${long}${long}\nend\n`),
			Buffer.from("\n\n"),
			Buffer.from("only"),
		];
		for (const bytes of cases) {
			const id = await store(bytes, 7);
			const seen: string[] = [];
			for await (const { line, text } of archive.lines(id)) seen.push(`${line}:${text}`);
			expect(seen).toEqual(splitLines(bytes).map((part, index) => `${index + 1}:${part.toString("utf8")}`));
		}
	});

	it("creates directories for the user only and files readable by the user only", async () => {
		const id = await store(Buffer.from("secret\n"));
		expect((await stat(archive.dir)).mode & 0o777).toBe(0o700);
		expect((await stat(join(archive.dir, id))).mode & 0o777).toBe(0o700);
		for (const name of await readdir(join(archive.dir, id))) {
			expect((await stat(join(archive.dir, id, name))).mode & 0o777).toBe(0o600);
		}
	});

	it("never reuses the id of an aborted observation and does not list it", async () => {
		const writer = await archive.create();
		await writer.write(Buffer.from("partial"));
		await writer.abort();
		expect(await store(Buffer.from("next\n"))).toBe("obs_000002");
		expect((await archive.list()).map((r) => r.id)).toEqual(["obs_000002"]);
		await expect(archive.get("obs_000001")).rejects.toThrow(/obs_000001 has no complete archive/);
	});

	it("flushes before it is sealed: the observation reads back exactly, and no write follows the flush", async () => {
		const text = Array.from({ length: 30_000 }, (_, i) => `row ${i}`).join("\n");
		const writer = await archive.create();
		await writer.write(Buffer.from(text));
		writer.flush();
		writer.flush();
		await expect(writer.write(Buffer.from("late\n"))).rejects.toThrow(/obs_000001 is already sealed/);
		const record = await writer.finish(facts);
		expect(record.lines).toBe(30_000);
		expect((await archive.readBytes(writer.id)).toString()).toBe(text);
		expect((await archive.readLines(writer.id, 29_999, 30_000)).lines).toEqual(["row 29998", "row 29999"]);
	});

	it("has every byte in the file once a flush resolves, and is readable only once sealed", async () => {
		const text = Array.from({ length: 40_000 }, (_, i) => `line ${i} ${"y".repeat(i % 50)}`).join("\n");
		const writer = await archive.create();
		// Written in pieces that cut lines and chunks anywhere, none awaited alone.
		const bytes = Buffer.from(text);
		await Promise.all(
			Array.from({ length: Math.ceil(bytes.length / 7_000) }, (_, i) =>
				writer.write(bytes.subarray(i * 7_000, (i + 1) * 7_000)),
			),
		);
		await writer.flush();
		const onDisk = gunzipSync(await readFile(join(archive.dir, writer.id, "output.gz"))).toString();
		expect(onDisk).toBe(text);
		await expect(archive.get(writer.id)).rejects.toThrow(/has no complete archive/);
		await writer.finish(facts);
		expect((await archive.readBytes(writer.id)).toString()).toBe(text);
	});

	it("drops an observation aborted after its flush began, and reports a seal that fails after an early flush", async () => {
		const dropped = await archive.create();
		await dropped.write(Buffer.from("x\n".repeat(50_000)));
		dropped.flush();
		await dropped.abort();
		await expect(archive.get(dropped.id)).rejects.toThrow(/obs_000001 has no complete archive/);

		const failing = await archive.create();
		await failing.write(Buffer.from("y\n".repeat(50_000)));
		// Its directory is gone from under the writer: the flush still ends, the metadata cannot be written.
		await rm(join(archive.dir, failing.id), { recursive: true, force: true });
		failing.flush();
		await expect(failing.finish(facts)).rejects.toThrow(/cannot seal the archive of obs_000002/);
	});

	it("gives distinct ids to concurrent writers", async () => {
		const ids = await Promise.all(Array.from({ length: 12 }, () => store(Buffer.from("x\n"))));
		expect(new Set(ids).size).toBe(12);
	});

	it("reports size on disk and cleans up only its own session", async () => {
		const other = await openSessionArchive({ root, sessionId: "s2" });
		const keep = await other.create();
		await keep.write(Buffer.from("keep me\n"));
		await keep.finish(facts);
		await store(Buffer.from("drop me\n"));
		expect(await archive.diskBytes()).toBeGreaterThan(0);
		await archive.cleanup();
		expect(await archive.list()).toEqual([]);
		expect(await archive.diskBytes()).toBe(0);
		expect((await other.readLines(keep.id, 1, 1)).lines).toEqual(["keep me"]);
	});
});

describe("the chunk writer", () => {
	it("keeps every chunk in order when many are written before any reaches the disk", async () => {
		const path = join(root, "ordered.gz");
		const handle = await open(path, "wx");
		const writer = new ChunkedGzipWriter(handle.fd);
		const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} ${"x".repeat(i % 97)}`);
		const text = `${lines.join("\n")}\n`;
		const bytes = Buffer.from(text);
		// Small pieces, never awaited one by one, as a busy caller would pass them.
		const writes: Promise<void>[] = [];
		for (let at = 0; at < bytes.length; at += 10_000) writes.push(writer.write(bytes.subarray(at, at + 10_000)));
		await Promise.all(writes);
		const index = await writer.finish();
		await handle.close();
		expect(index.chunks.length).toBeGreaterThan(20);
		expect(index.lines).toBe(lines.length);
		expect(gunzipSync(await readFile(path)).toString()).toBe(text);
		let offset = 0;
		for (const chunk of index.chunks) {
			expect(chunk.offset).toBe(offset);
			offset += chunk.length;
		}
	});

	it("reports a failed file write instead of sealing an incomplete archive", async () => {
		const handle = await open(join(root, "closed.gz"), "wx");
		const writer = new ChunkedGzipWriter(handle.fd);
		await handle.close();
		const data = Buffer.from("a line of output\n".repeat(20_000));
		await expect(
			(async () => {
				await writer.write(data);
				await writer.finish();
			})(),
		).rejects.toThrow(/closed|EBADF/i);
	});
});

describe("copying into a forked session", () => {
	it("keeps the same ids readable in the fork and continues numbering after them", async () => {
		await store(Buffer.from("first\n"));
		const pinned = await store(Buffer.from("pinned output\n"));
		const fork = await openSessionArchive({ root, sessionId: "fork" });
		expect(await copyObservations(archive, fork, [pinned])).toEqual([pinned]);
		expect((await fork.readLines(pinned, 1, 1)).lines).toEqual(["pinned output"]);
		expect(await copyObservations(archive, fork, [pinned])).toEqual([]);
		const next = await fork.create();
		expect(next.id).toBe("obs_000003");
		await next.abort();
		await expect(copyObservations(archive, fork, ["obs_000099"])).rejects.toThrow(/unknown observation id obs_000099/);
	});
});

describe("bad ids and damaged archives", () => {
	it("rejects path-like, empty and malformed ids, naming them and saying how to list ids", async () => {
		for (const bad of ["../../x", "", "obs_1", "obs_000001/../x", "OBS_000001"]) {
			const error = await archive.get(bad).catch((e) => e);
			expect(error).toBeInstanceOf(ArchiveError);
			expect(error.message).toContain(JSON.stringify(bad));
			expect(error.message).toMatch(/list/);
		}
	});

	it("rejects an unknown id, naming it", async () => {
		await store(Buffer.from("a\n"));
		const error = await archive.readLines("obs_000042", 1, 2).catch((e) => e);
		expect(error).toBeInstanceOf(ArchiveError);
		expect(error.message).toMatch(/unknown observation id obs_000042/);
		expect(error.id).toBe("obs_000042");
	});

	it("rejects an impossible line range", async () => {
		const id = await store(Buffer.from("a\n"));
		await expect(archive.readLines(id, 0, 3)).rejects.toThrow(/1-based/);
		await expect(archive.readLines(id, 5, 3)).rejects.toThrow(/startLine <= endLine/);
	});

	it("names the id when the compressed output is corrupted, never returning wrong bytes", async () => {
		const id = await store(Buffer.from("hello world\n".repeat(20000)));
		const path = join(archive.dir, id, "output.gz");
		const bytes = await readFile(path);
		bytes[Math.floor(bytes.length / 2)] ^= 0xff;
		await writeFile(path, bytes);
		const error = await archive.readBytes(id).catch((e) => e);
		expect(error).toBeInstanceOf(ArchiveError);
		expect(error.message).toContain(id);
	});

	it("names the id when the compressed output is truncated or missing", async () => {
		const id = await store(Buffer.from("hello world\n".repeat(20000)));
		const path = join(archive.dir, id, "output.gz");
		await truncate(path, 100);
		await expect(archive.readLines(id, 10000, 10001)).rejects.toThrow(new RegExp(`${id}.*damaged`));
		await rm(path);
		await expect(archive.readLines(id, 1, 1)).rejects.toThrow(new RegExp(`${id}.*missing`));
	});

	it("names the id when the metadata is corrupted or missing", async () => {
		const id = await store(Buffer.from("a\n"));
		await writeFile(join(archive.dir, id, "meta.json"), "{not json");
		await expect(archive.get(id)).rejects.toThrow(new RegExp(`${id} is corrupted`));
		await rm(join(archive.dir, id, "meta.json"));
		await expect(archive.get(id)).rejects.toThrow(new RegExp(`${id} has no complete archive`));
	});

	it("fails to create with a clear error when the root cannot be written, yet still lists", async () => {
		const blocker = join(root, "file");
		await writeFile(blocker, "not a directory");
		const blocked = await openSessionArchive({ root: blocker, sessionId: "s" });
		await expect(blocked.create()).rejects.toThrow(/PRIME_CONTEXT_HOME/);
		expect(await blocked.list()).toEqual([]);
	});
});

describe("round trip properties", () => {
	const bytesWithLines = fc
		.array(
			fc.oneof(
				fc.uint8Array({ maxLength: 40 }),
				fc.constantFrom(
					Uint8Array.from([10]),
					Uint8Array.from([13, 10]),
					Uint8Array.from([0xff, 0xfe]),
					Uint8Array.from([0xe2, 0x82]),
				),
				fc.string({ unit: "grapheme", maxLength: 30 }).map((s) => new TextEncoder().encode(s)),
			),
			{ maxLength: 60 },
		)
		.map((parts) => Buffer.concat(parts.map((p) => Buffer.from(p))));

	it("returns exactly the archived bytes, whatever they are", async () => {
		await fc.assert(
			fc.asyncProperty(bytesWithLines, fc.integer({ min: 1, max: 7 }), async (bytes, pieces) => {
				const id = await store(bytes, pieces);
				expect((await archive.readBytes(id)).equals(bytes)).toBe(true);
				expect((await archive.get(id)).bytes).toBe(bytes.length);
			}),
			{ numRuns: 150 },
		);
	});

	it("reads any line range as the matching slice of the original split on newlines", async () => {
		await fc.assert(
			fc.asyncProperty(
				bytesWithLines,
				fc.integer({ min: 1, max: 40 }),
				fc.integer({ min: 0, max: 40 }),
				async (bytes, start, span) => {
					const id = await store(bytes, 3);
					const expected = splitLines(bytes);
					const { lines, totalLines } = await archive.readLines(id, start, start + span);
					expect(totalLines).toBe(expected.length);
					expect(lines).toEqual(expected.slice(start - 1, start + span).map((b) => b.toString("utf8")));
				},
			),
			{ numRuns: 150 },
		);
	});

	it("reads ranges exactly when chunks split long lines", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.integer({ min: 0, max: 3 * CHUNK_BYTES }), { minLength: 1, maxLength: 5 }),
				fc.boolean(),
				async (lengths, trailing) => {
					const text = lengths.map((n, i) => String.fromCharCode(97 + i).repeat(n)).join("\n") + (trailing ? "\n" : "");
					const bytes = Buffer.from(text);
					const id = await store(bytes, 5);
					const expected = splitLines(bytes).map((b) => b.toString());
					for (let line = 1; line <= expected.length; line++) {
						expect((await archive.readLines(id, line, line)).lines).toEqual([expected[line - 1]]);
					}
				},
			),
			{ numRuns: 20 },
		);
	});
});
