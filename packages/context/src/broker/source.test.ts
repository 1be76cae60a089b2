import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextCheck } from "../archive/text-check.js";
import { LineSplitter, streamsEqual } from "./source.js";

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
