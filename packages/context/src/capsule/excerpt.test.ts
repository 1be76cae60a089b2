import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { capsuleFor } from "../../test/capsule-for.js";

describe("excerpt", () => {
	it("shows where the output ends, even when its last lines repeat a shape shown earlier", () => {
		const rows = Array.from({ length: 3000 }, (_, i) => `building module ${i % 7} step ${i}: ok`);
		rows.push("error: linker failed with exit status 1");
		for (let i = 0; i < 25; i++) rows.push(`  Downloading package-${i}.tar.gz (${i}.${i} MB)`);
		const capsule = capsuleFor(rows.join("\n"));
		const shown = capsule.text.split("\n").filter((row) => /^\d+: +Downloading/.test(row));
		// The first one follows the error line as its context; the others fold into it, but the last
		// line of the output is shown too.
		expect(shown).toEqual([
			"3002:   Downloading package-0.tar.gz (0.0 MB)",
			"3026:   Downloading package-24.tar.gz (24.24 MB)",
		]);
		expect(capsule.text).toContain("\n3001: error: linker failed with exit status 1\n");
	});

	it("shows a last line of evidence once when an identical line is shown with its count", () => {
		const rows = Array.from({ length: 3000 }, (_, i) => `building module ${i % 7} step ${i}: ok`);
		rows.push("RuntimeError: cache corrupted");
		for (let i = 0; i < 20; i++) rows.push(`  Downloading package-${i}.tar.gz (${i}.${i} MB)`);
		rows.push("RuntimeError: cache corrupted");
		const capsule = capsuleFor(rows.join("\n"));
		expect(capsule.text.split("\n").filter((row) => row.includes("RuntimeError: cache corrupted"))).toEqual([
			"3001: RuntimeError: cache corrupted [x2 identical lines]",
		]);
	});

	it("keeps what tells failures apart under an exception line folded with an identical one", () => {
		// node's spec reporter: three failures print the same `AssertionError ...: Expected values to be
		// strictly equal:` line and differ in the values under it.
		const output = readFileSync(
			fileURLToPath(
				new URL("../../../../fixtures/outputs/084-node-test-spec-repeated-assertion/output.txt", import.meta.url),
			),
			"utf8",
		);
		const shown = capsuleFor(output)
			.text.split("\n")
			.filter((row) => row.includes("!=="));
		expect(shown.map((row) => row.replace(/^\d+: +/, ""))).toEqual(["2 !== 3", "6 !== 7", "'a' !== 'b'"]);
	});
});
