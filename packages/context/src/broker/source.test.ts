import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextCheck } from "../archive/text-check.js";
import { LineSplitter, streamsEqual, visibleTextSource } from "./source.js";

function split(chunks: Buffer[]): { text: string; line: number; bytes: number }[] {
	const out: { text: string; line: number; bytes: number }[] = [];
	const splitter = new LineSplitter((text, line, bytes) => out.push({ text, line, bytes }));
	for (const chunk of chunks) splitter.push(chunk);
	splitter.end();
	return out;
}

/** Cuts a buffer at the given offsets, including inside multi-byte characters. */
function cut(buffer: Buffer, offsets: number[]): Buffer[] {
	const points = [...new Set(offsets.map((o) => o % (buffer.length + 1)))].sort((a, b) => a - b);
	const chunks: Buffer[] = [];
	let at = 0;
	for (const p of [...points, buffer.length]) {
		if (p > at) chunks.push(buffer.subarray(at, p));
		at = Math.max(at, p);
	}
	return chunks;
}

/** The reference for a line redrawn with `\r`: its last non-empty frame after a `\r` marker, else the line. */
function finalFrame(line: string): string {
	const [first, ...frames] = line.split("\r");
	let out = first;
	for (const frame of frames) if (frame !== "") out = `\r${frame}`;
	return out;
}

describe("LineSplitter", () => {
	it("keeps the final frame of a progress bar redrawn with carriage returns, far past the first 4 KiB", () => {
		const frames = Array.from({ length: 101 }, (_, i) => `downloading ${"#".repeat(i % 40)} ${i}%`);
		const line = `${frames.join("\r")}\r`;
		const got = split(cut(Buffer.from(`${line}\nnext\n`), [5000, 5001, 9000]));
		expect(got).toEqual([
			{ text: "\rdownloading #################### 100%", line: 1, bytes: Buffer.byteLength(line) },
			{ text: "next", line: 2, bytes: 4 },
		]);
	});

	it("gives each line, its number and its exact byte size, however the bytes are chunked", () => {
		const unit = fc.constantFrom("a", "é", "😀", "\n", " ", "\r");
		fc.assert(
			fc.property(fc.string({ unit, maxLength: 200 }), fc.array(fc.nat(), { maxLength: 12 }), (text, offsets) => {
				const bytes = Buffer.from(text, "utf8");
				const expected = text === "" ? [] : text.split("\n");
				if (text.endsWith("\n")) expected.pop();
				const got = split(cut(bytes, offsets));
				expect(got.map((l) => l.text)).toEqual(expected.map(finalFrame));
				expect(got.map((l) => l.line)).toEqual(expected.map((_, i) => i + 1));
				expect(got.map((l) => l.bytes)).toEqual(expected.map((l) => Buffer.byteLength(l)));
			}),
			{ numRuns: 500 },
		);
	});

	it("keeps only the first 4096 characters of a huge line but counts all its bytes", () => {
		const line = "y".repeat(3 * 1024 * 1024);
		const got = split(cut(Buffer.from(`${line}\nend\n`), [1000, 70_000, 2_000_000]));
		expect(got).toHaveLength(2);
		expect(got[0].text).toHaveLength(4096);
		expect(got[0].bytes).toBe(line.length);
		expect(got[1]).toEqual({ text: "end", line: 2, bytes: 3 });
	});

	it("decodes 64 KiB chunks with characters cut at every 32 KiB decoding step exactly", () => {
		// Lines of 1-, 2-, 3- and 4-byte characters, so that some character straddles each 32 KiB step.
		const lines = Array.from({ length: 4000 }, (_, i) => `${i} ${"aé€😀".repeat(1 + (i % 7))} end`);
		const text = `${lines.join("\n")}\n`;
		const bytes = Buffer.from(text, "utf8");
		const offsets = Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) => (i + 1) * 65_536);
		const got = split(cut(bytes, offsets));
		expect(got.map((l) => l.text)).toEqual(lines);
		expect(got.map((l) => l.bytes)).toEqual(lines.map((l) => Buffer.byteLength(l)));
	});

	it("shows invalid bytes as U+FFFD, as a plain decode does, also where a 32 KiB step cuts them", () => {
		// Lines of 100 bytes, then a cut-off three-byte character whose first byte is the 32 768th.
		const head = Buffer.from(`${"x".repeat(99)}\n`.repeat(327) + "y".repeat(67));
		const bytes = Buffer.concat([head, Buffer.from([0xe2, 0x82, 0x0a, 0xff, 0x41, 0x0a])]);
		expect(head.length).toBe(32_767);
		const got = split([bytes]);
		expect(got.slice(-2)).toEqual([
			{ text: `${"y".repeat(67)}\ufffd`, line: 328, bytes: 69 },
			{ text: "\ufffdA", line: 329, bytes: 2 },
		]);
		expect(got.map((l) => l.text)).toEqual(bytes.toString("utf8").split("\n").slice(0, -1));
	});

	it("reads visible text of one-byte characters only (Latin-1) exactly as written", async () => {
		const text = `café ${"naïve ".repeat(20_000)}\nÀ bientôt\n\u00ff`;
		const chunks: Buffer[] = [];
		for await (const chunk of visibleTextSource(text).chunks()) chunks.push(chunk);
		expect(Buffer.concat(chunks).toString("utf8")).toBe(text);
		expect(split(chunks).map((l) => l.text)).toEqual([text.split("\n")[0].slice(0, 4096), "À bientôt", "\u00ff"]);
	});
});

describe("TextCheck", () => {
	function isBinary(chunks: Buffer[]): boolean {
		const check = new TextCheck();
		for (const chunk of chunks) check.push(chunk);
		return check.end();
	}

	it("agrees with a strict UTF-8 decoder however the bytes are chunked", () => {
		const strict = new TextDecoder("utf-8", { fatal: true });
		const awkward = [
			[0xed, 0xa0, 0x80],
			[0xf4, 0x90, 0x80, 0x80],
			[0xc0, 0xaf],
			[0xe2, 0x82],
			[0x80],
			[0xf0, 0x9f],
			[0],
		];
		const piece = fc.oneof(
			fc.string({ unit: "binary", maxLength: 12 }).map((s) => Buffer.from(s, "utf8")),
			fc.uint8Array({ maxLength: 6 }).map((a) => Buffer.from(a)),
			fc.constantFrom(...awkward.map((a) => Buffer.from(a))),
		);
		fc.assert(
			fc.property(fc.array(piece, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 5 }), (pieces, offsets) => {
				const bytes = Buffer.concat(pieces);
				let binary = bytes.includes(0);
				try {
					strict.decode(bytes);
				} catch {
					binary = true;
				}
				expect(isBinary(cut(bytes, offsets))).toBe(binary);
			}),
			{ numRuns: 2000 },
		);
	});

	it("accepts a character split between chunks and rejects one cut off at the end", () => {
		const smile = Buffer.from("ok 🙂\n", "utf8");
		expect(isBinary([smile.subarray(0, 4), smile.subarray(4, 6), smile.subarray(6)])).toBe(false);
		expect(isBinary([smile.subarray(0, 5)])).toBe(true);
	});
});

describe("streamsEqual", () => {
	async function* chunks(parts: string[]) {
		for (const p of parts) yield Buffer.from(p);
	}

	it("compares byte streams whatever their chunking", async () => {
		expect(await streamsEqual(chunks(["abc", "def"]), chunks(["ab", "cdef"]), 6)).toBe(true);
		expect(await streamsEqual(chunks(["abc", "deg"]), chunks(["ab", "cdef"]), 6)).toBe(false);
		expect(await streamsEqual(chunks(["abc"]), chunks(["abcdef"]), 6)).toBe(false);
	});
});
