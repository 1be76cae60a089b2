import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { requireWritableSessions } from "./writable-home.js";

const roots: string[] = [];
afterEach(() => {
	for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function root(): string {
	const made = mkdtempSync(join(tmpdir(), "writable-home-"));
	roots.push(made);
	return made;
}

it("accepts a home whose sessions folder exists or can be made", () => {
	const home = join(root(), "home");
	expect(() => requireWritableSessions(join(home, "sessions"), home)).not.toThrow();
	mkdirSync(join(home, "sessions"), { recursive: true });
	expect(() => requireWritableSessions(join(home, "sessions"), home)).not.toThrow();
});

it("refuses a sessions path that is a file, and a home that is a link to nothing", () => {
	const home = join(root(), "home");
	mkdirSync(home);
	writeFileSync(join(home, "sessions"), "x");
	expect(() => requireWritableSessions(join(home, "sessions"), home)).toThrow(
		`Sessions cannot be saved in the agent home ${home}: ${home}/sessions is not a folder.`,
	);
	const dangling = join(root(), "dangling");
	symlinkSync(join(dangling, "..", "missing"), dangling);
	expect(() => requireWritableSessions(join(dangling, "sessions"), dangling)).toThrow(
		`Sessions cannot be saved in the agent home ${dangling}: ${dangling} is a link to nothing.`,
	);
});
