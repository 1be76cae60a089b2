import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LockError, withFileLock } from "./file-lock.js";

let dir: string;
beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "pc-lock-"));
});
afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

describe("withFileLock", () => {
	it("runs the work holding the lock and removes it after", async () => {
		const path = join(dir, "state.lock");
		const seen = await withFileLock(path, async () => existsSync(path), { what: "the state" });
		expect(seen).toBe(true);
		expect(existsSync(path)).toBe(false);
	});

	it("never runs the work unlocked: a lock held past the wait is an error naming the file", async () => {
		const path = join(dir, "state.lock");
		await writeFile(path, "");
		let ran = false;
		const attempt = withFileLock(
			path,
			async () => {
				ran = true;
			},
			{ what: "the broker state", waitMs: 100 },
		);
		await expect(attempt).rejects.toThrow(LockError);
		await expect(attempt).rejects.toThrow(`the broker state is locked by another process (${path})`);
		expect(ran).toBe(false);
	});

	it("never runs the work unlocked when the lock cannot be created at all", async () => {
		const path = join(dir, "missing-dir", "state.lock");
		await expect(withFileLock(path, async () => 1, { what: "the broker state" })).rejects.toThrow(
			/cannot lock the broker state/,
		);
	});

	it("takes over a lock left by a process that died holding it", async () => {
		const path = join(dir, "state.lock");
		await writeFile(path, "");
		const old = new Date(Date.now() - 60_000);
		await import("node:fs/promises").then((fs) => fs.utimes(path, old, old));
		expect(await withFileLock(path, async () => "done", { what: "the state", staleMs: 30_000 })).toBe("done");
	});

	it("lets concurrent holders take turns without losing an update", async () => {
		const path = join(dir, "count.lock");
		let count = 0;
		await Promise.all(
			Array.from({ length: 20 }, () =>
				withFileLock(
					path,
					async () => {
						const read = count;
						await new Promise((resolve) => setImmediate(resolve));
						count = read + 1;
					},
					{ what: "the counter" },
				),
			),
		);
		expect(count).toBe(20);
	});
});
