import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { childSessionId } from "./child-archive.js";

const roots: string[] = [];
afterEach(() => {
	for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function child(artifactDir: string, folder: string, header: Record<string, unknown>): void {
	mkdirSync(join(artifactDir, folder), { recursive: true });
	writeFileSync(join(artifactDir, folder, `${header.id}.jsonl`), `${JSON.stringify({ type: "session", ...header })}\n`);
}

it("a name reused after delete_subagent resolves to the newest child of that name, not the first folder", async () => {
	const root = mkdtempSync(join(tmpdir(), "child-archive-"));
	roots.push(root);
	const sessionFile = join(root, "parent.jsonl");
	const artifactDir = join(root, "parent");
	// The deleted child's folder sorts first; the current one was made later.
	child(artifactDir, "sub-00000000", { id: "old-a", timestamp: "2026-01-01T10:00:00.000Z", rlmChild: { name: "a" } });
	child(artifactDir, "sub-11111111", { id: "other", timestamp: "2026-01-01T10:00:02.000Z", rlmChild: { name: "b" } });
	child(artifactDir, "sub-ffffffff", { id: "new-a", timestamp: "2026-01-01T10:00:01.000Z", rlmChild: { name: "a" } });
	expect(await childSessionId(sessionFile, "parent", "a")).toBe("new-a");
	expect(await childSessionId(sessionFile, "parent", "b")).toBe("other");
	expect(await childSessionId(sessionFile, "parent", "c")).toBeUndefined();
});
