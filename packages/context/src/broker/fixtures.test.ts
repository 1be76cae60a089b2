import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionArchive } from "../archive/index.js";
import { unescapeXmlText } from "../capsule/index.js";
import { DEFAULT_CONFIG } from "../types.js";
import { createBroker } from "./index.js";

const FIXTURES = fileURLToPath(new URL("../../../../fixtures/outputs/", import.meta.url));

interface Meta {
	tool: string;
	command: string;
	exit_code: number;
	failing_ids: string[];
	outcome: "pass" | "fail" | "error";
}

const cases = readdirSync(FIXTURES)
	.filter((name) => /^\d{3}-/.test(name))
	.sort()
	.map((name) => ({
		name,
		meta: JSON.parse(readFileSync(join(FIXTURES, name, "meta.json"), "utf8")) as Meta,
		bytes: readFileSync(join(FIXTURES, name, "output.txt")),
	}));
const large = cases.filter((c) => c.bytes.length >= DEFAULT_CONFIG.minTextBytes);

const roots: string[] = [];
afterAll(async () => {
	await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

/** The broker's answer for a fixture, on an archive of its own. */
async function observe(c: (typeof cases)[number]) {
	const root = await mkdtemp(join(tmpdir(), "broker-fixture-"));
	roots.push(root);
	const archive = await openSessionArchive({ root, sessionId: "fixture" });
	const broker = await createBroker({ archive, config: DEFAULT_CONFIG });
	const text = c.bytes.toString("utf8");
	const result = await broker.observe({
		tool: c.meta.tool,
		text,
		isError: false,
		exitCode: c.meta.exit_code,
		command: c.meta.command,
	});
	return { archive, text, result };
}

/** A failing run and a diff are worth reading on, so their capsules carry a Read hint; a clean run's is its verdict. */
const failing = large.filter((c) => c.meta.outcome !== "pass");
const diffs = large.filter((c) => c.meta.tool === "git");

/** The Read hint of a capsule: the observation it names and a range of at most 30 of its lines. */
function expectReadHint(result: { id: string; lines: number; text: string }): void {
	const read = /action=read id=(obs_\d+) startLine=(\d+) endLine=(\d+)/.exec(result.text);
	expect(read, "a Read hint").not.toBeNull();
	const [, id, start, end] = read as RegExpExecArray;
	expect(id).toBe(result.id);
	expect(Number(start)).toBeGreaterThanOrEqual(1);
	expect(Number(end)).toBeLessThanOrEqual(result.lines);
	expect(Number(end) - Number(start)).toBeLessThanOrEqual(30);
}

describe(`real tool outputs (${FIXTURES})`, () => {
	it("has outputs at or over the threshold to test: failing runs and diffs among them", () => {
		expect(large.length).toBeGreaterThanOrEqual(10);
		expect(failing.length).toBeGreaterThanOrEqual(10);
		expect(diffs.length).toBeGreaterThanOrEqual(2);
	});

	it.each(large.map((c) => [c.name, c] as const))(
		"%s: capsule keeps every failing id and stays within its budget unless the ids need more",
		async (_name, c) => {
			const { archive, result } = await observe(c);
			expect(result.decision).toBe("structured-capsule");
			expect(result.archived).toBe(true);
			expect((await archive.readBytes(result.id)).equals(c.bytes)).toBe(true);

			// Capsule bodies are XML text: undo the escapes before looking for literal ids.
			const shown = unescapeXmlText(result.text);
			const missing = c.meta.failing_ids.filter((id) => !shown.includes(id));
			// Ids past the ceiling are counted, never silently dropped; with none left out, none are said to be.
			const counted = /\nMORE_FAILING_TESTS \(\d+, counted per file; not listed here\):\n/.test(shown);
			expect({ counted, mentioned: shown.includes("MORE_FAILING_TESTS") }).toEqual({
				counted: missing.length > 0,
				mentioned: missing.length > 0,
			});
			expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(4 * DEFAULT_CONFIG.capsuleMaxBytes);

			expect(result.text.startsWith(`<prime_context_output id="${result.id}" tool="${c.meta.tool}"`)).toBe(true);
			expect(result.text.endsWith("</prime_context_output>")).toBe(true);
			// Over budget only when the failing ids alone do not fit (then they are all listed, and no
			// excerpt). The condition is the output's size; under budget, an excerpt may or may not fit.
			if (Buffer.byteLength(result.text) > DEFAULT_CONFIG.capsuleMaxBytes) {
				expect(result.text).toContain("No excerpt fits this capsule");
			}
		},
	);

	it.each(failing.map((c) => [c.name, c] as const))(
		"%s: a failed run's capsule never reads as passing, and its Read and Search hints are true",
		async (_name, c) => {
			const { text, result } = await observe(c);
			expect(result.text).not.toMatch(/\bPASS\b/);
			expect(result.text).toMatch(/\bFAIL\b/);
			expectReadHint(result);
			const search = /action=search id=(obs_\d+) query="([^"]*)"/.exec(result.text);
			expect(search, "a Search hint").not.toBeNull();
			const [, id, query] = search as RegExpExecArray;
			expect(id).toBe(result.id);
			expect(query).not.toBe("");
			expect(text.toLowerCase()).toContain((query as string).toLowerCase());
		},
	);

	it.each(diffs.map((c) => [c.name, c] as const))(
		"%s: a diff's capsule has a true Read hint and no Search hint",
		async (_name, c) => {
			const { result } = await observe(c);
			expectReadHint(result);
			expect(result.text).not.toContain("action=search");
		},
	);

	it("passes two distinct medium runs through, then keeps every failing id of the third and its first failure in a compact capsule", async () => {
		const byName = (prefix: string) => cases.find((c) => c.name.startsWith(prefix));
		const medium = ["041", "044", "018"].map(byName);
		expect(medium.every((c) => c !== undefined)).toBe(true);
		const root = await mkdtemp(join(tmpdir(), "broker-grace-"));
		roots.push(root);
		const broker = await createBroker({
			archive: await openSessionArchive({ root, sessionId: "grace" }),
			config: DEFAULT_CONFIG,
		});
		const results = [];
		for (const c of medium as (typeof cases)[number][]) {
			expect(c.bytes.length).toBeGreaterThanOrEqual(8192);
			expect(c.bytes.length).toBeLessThan(DEFAULT_CONFIG.minTextBytes);
			results.push(
				await broker.observe({
					tool: c.meta.tool,
					text: c.bytes.toString("utf8"),
					isError: false,
					exitCode: c.meta.exit_code,
				}),
			);
		}
		expect(results.map((r) => r.decision)).toEqual(["pass-through", "pass-through", "structured-capsule"]);
		const third = results[2];
		// Everything but the failing-id block fits the compact budget; the ids take the capsule past it.
		const ids = third.text.slice(third.text.indexOf("FAILING_TESTS ("), third.text.indexOf("Read exact visible text"));
		expect(Buffer.byteLength(third.text) - Buffer.byteLength(ids)).toBeLessThanOrEqual(1536);
		// Ten ids fill the budget: the first failure's message and location are still shown ahead of them.
		expect(third.text).toContain(
			"FIRST_FAILURE:\n56:   File \"/home/dev/work/tomli/src/tomli/_parser.py\", line 590, in parse_basic_str_escape\n59: KeyError: '\\\\'\n",
		);
		const shown = unescapeXmlText(third.text);
		for (const id of (medium[2] as (typeof cases)[number]).meta.failing_ids) expect(shown).toContain(id);
		expect(third.text).toMatch(/\bFAIL\b/);
	});

	it("passes a small real failure through when its capsule would cost more than 30% of it", async () => {
		const c = cases.find((x) => x.name.startsWith("001"));
		if (!c) throw new Error("fixture 001 is missing from the corpus");
		const root = await mkdtemp(join(tmpdir(), "broker-roi-"));
		roots.push(root);
		const config = { ...DEFAULT_CONFIG, minTextBytes: 4096 };
		const broker = await createBroker({ archive: await openSessionArchive({ root, sessionId: "roi" }), config });
		const text = c.bytes.toString("utf8");
		const result = await broker.observe({ tool: c.meta.tool, text, isError: false, exitCode: c.meta.exit_code });
		expect(result.decision).toBe("pass-through");
		expect(result.text).toBe(text);
	});

	it("clean passing runs become capsules of at most 768 bytes without Read or Search hints", async () => {
		const clean = large.filter((c) => c.meta.outcome === "pass" && c.meta.tool !== "git");
		expect(clean.length).toBeGreaterThanOrEqual(3);
		for (const c of clean) {
			const root = await mkdtemp(join(tmpdir(), "broker-clean-"));
			roots.push(root);
			const broker = await createBroker({
				archive: await openSessionArchive({ root, sessionId: "clean" }),
				config: DEFAULT_CONFIG,
			});
			const result = await broker.observe({
				tool: c.meta.tool,
				text: c.bytes.toString("utf8"),
				isError: false,
				exitCode: 0,
			});
			expect(Buffer.byteLength(result.text), c.name).toBeLessThanOrEqual(768);
			expect(result.text, c.name).toMatch(/PASS/);
			expect(result.text, c.name).not.toMatch(/action=(read|search)/);
		}
	});
});
