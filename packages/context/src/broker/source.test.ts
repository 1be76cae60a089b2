import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { TextCheck } from "../archive/text-check.js";
import type { ObservationInput } from "../types.js";
import { scanObservation } from "./scan.js";
import {
	LineSplitter,
	type ObservationSourceStream,
	openObservationSource,
	streamsEqual,
	visibleTextSource,
} from "./source.js";

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

/**
 * The reference for a line redrawn with `\r`: its last frame after a `\r` marker that shows something
 * (not empty, not colour changes only), else the line.
 */
function finalFrame(line: string): string {
	const [first, ...frames] = line.split("\r");
	let out = first;
	// biome-ignore lint/suspicious/noControlCharactersInRegex: colour escapes are what is removed.
	for (const frame of frames) if (frame.replace(/\u001b\[[0-9;]*m/g, "") !== "") out = `\r${frame}`;
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
		const unit = fc.constantFrom("a", "é", "😀", "\n", " ", "\r", "\u001b[m", "\u001b[41m");
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

	it("keeps a frame followed only by colour changes after its carriage return (git's highlighted `\\r` in a CRLF diff)", () => {
		const line = "\u001b[32m+\u001b[m\u001b[32mValueError: quoted\u001b[m\u001b[41m\r\u001b[m";
		const erased = "50%\r\u001b[K";
		const bytes = Buffer.from(`${line}\n${erased}\n`);
		// Whole, cut before the return, right after it, and inside the colour change after it.
		for (const offsets of [[], [line.length - 4], [line.length - 3], [line.length - 1]]) {
			expect(split(cut(bytes, offsets))).toEqual([
				{ text: line.slice(0, -4), line: 1, bytes: line.length },
				{ text: "\r\u001b[K", line: 2, bytes: erased.length },
			]);
		}
	});

	it("judges a frame by its kept 4096 characters however the line was cut (colour changes past them are shown)", () => {
		// The last frame opens with 4095 characters of colour changes, then text: its kept part is colour
		// changes only, so the frame before it is what the line shows, whole or cut anywhere.
		const before = "A".repeat(3000);
		const line = `${before}\r${"\u001b[m".repeat(1365)}X`;
		const bytes = Buffer.from(`${line}\nok\n`);
		for (const offsets of [[], [10], [3000], [3001], [5000], [line.length - 1], [2000, 4000, 6000]]) {
			expect(split(cut(bytes, offsets)).map((l) => l.text)).toEqual([before, "ok"]);
		}
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

type Line = { text: string; line: number; bytes: number };

/** The contract: the lines of a plain decode of all the bytes, each shown as the splitter shows it. */
function decodedLines(bytes: Buffer): Line[] {
	if (bytes.length === 0) return [];
	const texts = bytes.toString("utf8").split("\n");
	const sizes: number[] = [];
	let at = 0;
	for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, at)) {
		sizes.push(nl - at);
		at = nl + 1;
	}
	sizes.push(bytes.length - at);
	if (bytes[bytes.length - 1] === 0x0a) {
		texts.pop();
		sizes.pop();
	}
	return texts.map((text, i) => ({ text: finalFrame(text).slice(0, 4096), line: i + 1, bytes: sizes[i] }));
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
	const out: Buffer[] = [];
	for await (const chunk of chunks) out.push(chunk);
	return out;
}

/** Bytes as a file hands them out: 64 KiB reads. */
function fileReads(bytes: Buffer): Buffer[] {
	const out: Buffer[] = [];
	for (let at = 0; at < bytes.length; at += 65_536) out.push(bytes.subarray(at, at + 65_536));
	return out;
}

/** Text that puts `tail` right at the end of about `size` characters of `filler`. */
const nearPieceEnd = (units: fc.Arbitrary<string>) =>
	fc
		.tuple(
			fc.constantFrom("x", "é", "ÿ", "€", "😀", "\r", "\n", "ab\n"),
			fc.constantFrom(32_768, 65_536, 98_304, 4096),
			fc.integer({ min: -5, max: 5 }),
			fc.string({ unit: units, maxLength: 12 }),
		)
		.map(
			([filler, size, shift, tail]) => filler.repeat(Math.max(0, Math.floor((size + shift) / filler.length))) + tail,
		);

const visibleUnit = fc.constantFrom("a", "é", "ÿ", "\u0080", "€", "😀", "\ud83d", "\ude00", "\n", "\r", "\0", "\ufffd");

describe("visible text and the same bytes read from a file", () => {
	const roots: string[] = [];
	afterAll(async () => {
		await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
	});

	it("give the lines of a plain decode of the bytes, characters and returns straddling every piece end", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(nearPieceEnd(visibleUnit), { minLength: 1, maxLength: 3 }),
				fc.array(fc.nat(), { maxLength: 6 }),
				async (parts, offsets) => {
					const text = parts.join("");
					const bytes = Buffer.from(text, "utf8");
					const expected = decodedLines(bytes);
					const visible = await collect(visibleTextSource(text).chunks());
					expect(Buffer.concat(visible).equals(bytes)).toBe(true);
					expect(split(visible)).toEqual(expected);
					expect(split(fileReads(bytes))).toEqual(expected);
					expect(split(cut(bytes, offsets))).toEqual(expected);
				},
			),
			{ numRuns: 30 },
		);
	});

	it("give the lines of a plain decode of any bytes, invalid ones straddling the 32 KiB decoding steps", () => {
		const awkward = [[0xff], [0x80], [0xc3], [0xe2, 0x82], [0xf0, 0x9f], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80]];
		const piece = fc.oneof(
			fc.constantFrom(...awkward.map((a) => Buffer.from(a))),
			fc.constantFrom("a", "é", "€", "😀", "\n", "\r", "\0").map((s) => Buffer.from(s)),
		);
		const part = fc
			.tuple(
				fc.constantFrom([0x78], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0x0d], [0xff]),
				fc.constantFrom(32_768, 65_536, 4096),
				fc.integer({ min: -4, max: 4 }),
				fc.array(piece, { maxLength: 8 }),
			)
			.map(([fill, size, shift, tail]) => {
				const reps = Math.floor((size + shift) / fill.length);
				return Buffer.concat([Buffer.alloc(reps * fill.length, Buffer.from(fill)), ...tail]);
			});
		fc.assert(
			fc.property(
				fc.array(part, { minLength: 1, maxLength: 3 }),
				fc.array(fc.nat(), { maxLength: 6 }),
				(parts, offsets) => {
					const bytes = Buffer.concat(parts);
					const expected = decodedLines(bytes);
					expect(split(fileReads(bytes))).toEqual(expected);
					expect(split(cut(bytes, offsets))).toEqual(expected);
				},
			),
			{ numRuns: 60 },
		);
	});

	it("show a lone surrogate of visible text as U+FFFD, as its bytes decode", async () => {
		const text = `FAILED tests/test_a.py::test_\ud800x - boom\nend \udc00\n${"x".repeat(65_535)}\ud83d\n`;
		const lines = split(await collect(visibleTextSource(text).chunks()));
		expect(lines.slice(0, 2)).toEqual([
			{ text: "FAILED tests/test_a.py::test_\ufffdx - boom", line: 1, bytes: 40 },
			{ text: "end \ufffd", line: 2, bytes: 7 },
		]);
		expect(lines).toEqual(decodedLines(Buffer.from(text, "utf8")));
	});

	it("keep the last frame of a 10 MB line redrawn across many pieces, capped at 4096 characters", async () => {
		const frames = Array.from({ length: 250_000 }, (_, i) => `[${"#".repeat(i % 50)}] ${i}/250000 é`);
		const last = "€".repeat(5000);
		const line = `${frames.join("\r")}\r${last}\r\r`;
		const text = `${line}\nnext\n\n`;
		const bytes = Buffer.from(text, "utf8");
		expect(bytes.length).toBeGreaterThan(10_000_000);
		const expected = [
			{ text: `\r${"€".repeat(4095)}`, line: 1, bytes: Buffer.byteLength(line) },
			{ text: "next", line: 2, bytes: 4 },
			{ text: "", line: 3, bytes: 0 },
		];
		expect(split(await collect(visibleTextSource(text).chunks()))).toEqual(expected);
		expect(split(fileReads(bytes))).toEqual(expected);
		// One-byte text, so the visible text is cut in 32K-character pieces.
		const ascii = `${frames.join("\r").replaceAll("é", "e")}\rdone`;
		const wanted = [{ text: "\rdone", line: 1, bytes: ascii.length }];
		expect(split(await collect(visibleTextSource(ascii).chunks()))).toEqual(wanted);
		expect(split(fileReads(Buffer.from(ascii)))).toEqual(wanted);
	});

	it("read ASCII sliced out of a two-byte string as the same ASCII from a file", async () => {
		const text = `€${"step ok\r\n".repeat(10_000)}tail`.slice(1);
		const expected = decodedLines(Buffer.from(text));
		expect(expected).toHaveLength(10_001);
		expect(expected[0]).toEqual({ text: "step ok", line: 1, bytes: 8 });
		expect(split(await collect(visibleTextSource(text).chunks()))).toEqual(expected);
		expect(split(fileReads(Buffer.from(text)))).toEqual(expected);
	});

	/** Everything a scan learns but the source label, from the visible text and from a file of its bytes. */
	async function scanBoth(text: string) {
		const root = await mkdtemp(join(tmpdir(), "two-byte-"));
		roots.push(root);
		const path = join(root, "output.txt");
		await writeFile(path, Buffer.from(text, "utf8"));
		const input: ObservationInput = { tool: "bash", text, isError: false, exitCode: 1 };
		const facts = async (stream: ObservationSourceStream) => {
			const scan = await scanObservation(stream, input, null);
			const { outcome, selection, bytes, lines, binary, mostlyBinary } = scan;
			return { source: scan.source, outcome, selection, bytes, lines, binary, mostlyBinary, text: scan.text() };
		};
		const visible = await facts(visibleTextSource(text));
		const file = await facts(await openObservationSource({ ...input, fullOutputPath: path }));
		expect([visible.source, file.source]).toEqual(["visible-tool-result", "public-complete-output"]);
		return { visible: { ...visible, source: undefined }, file: { ...file, source: undefined } };
	}

	const failing = [
		"Traceback (most recent call last):",
		'  File "/srv/app/mod_é.py", line 12, in run',
		"ValueError: bad ÿ value",
		"FAILED tests/test_x.py::test_ç - assert 1 == 2",
		"tests/test_x.py:9: AssertionError",
		"50%\r100%",
		"===== 1 failed, 2 passed in 0.12s =====",
	].join("\n");

	it("scan alike: outcome, kept lines, evidence and text, for Latin-1, NUL, redrawn and two-byte outputs", async () => {
		for (const text of [
			`${"café naïve ÿ\n".repeat(8000)}${failing}`,
			`${"é".repeat(32_767)}\rERROR: ÿ failed\n${failing}\n`,
			`a\0b\n${failing}\n${"\0".repeat(40_000)}`,
			`${"ok € line\n".repeat(10_000)}${failing}\r\r`,
			`${"progress #####\r".repeat(300_000)}done\n${failing}`,
			`${failing}\nlone \ud800 surrogate, € and a real \ufffd\n`,
			`€ a real \ufffd only\n${failing}`,
		]) {
			const { visible, file } = await scanBoth(text);
			expect(visible).toEqual(file);
			expect(visible.outcome.failingIds).toEqual(["tests/test_x.py::test_ç"]);
		}
	});

	it("scan alike when the visible text holds a lone surrogate: the failing id shows U+FFFD", async () => {
		const { visible, file } = await scanBoth(`FAILED tests/test_a.py::test_\ud800x - AssertionError\n${failing}\n`);
		expect(visible).toEqual(file);
		expect(visible.outcome.failingIds).toEqual(["tests/test_a.py::test_\ufffdx", "tests/test_x.py::test_ç"]);
		expect(visible.text?.startsWith("FAILED tests/test_a.py::test_\ufffdx")).toBe(true);
	});

	it("scan alike for any text straddling piece ends", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(nearPieceEnd(visibleUnit), { minLength: 1, maxLength: 2 }), async (parts) => {
				const { visible, file } = await scanBoth(`${parts.join("")}\n${failing}`);
				expect(visible).toEqual(file);
			}),
			{ numRuns: 15 },
		);
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
