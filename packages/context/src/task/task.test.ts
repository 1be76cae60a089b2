import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyTaskUpdate, EMPTY_TASK, fileTaskStore, renderTask, TaskStoreError, TaskUpdateError } from "./index.js";

describe("task updates", () => {
	it("sets and clears focus", () => {
		const set = applyTaskUpdate(EMPTY_TASK, { focus: "  Finish range reads. " });
		expect(set.snapshot.focus).toBe("Finish range reads.");
		expect(set.changes).toEqual(["set focus"]);
		expect(applyTaskUpdate(set.snapshot, { focus: null }).snapshot.focus).toBeNull();
		expect(applyTaskUpdate(set.snapshot, { focus: "" }).snapshot.focus).toBeNull();
	});

	it("numbers items item_N and never reuses a number after completion", () => {
		let { snapshot } = applyTaskUpdate(EMPTY_TASK, { add: ["first", "second"] });
		expect(snapshot.openItems).toEqual([
			{ id: "item_1", text: "first" },
			{ id: "item_2", text: "second" },
		]);
		snapshot = applyTaskUpdate(snapshot, { complete: ["item_2"] }).snapshot;
		snapshot = applyTaskUpdate(snapshot, { add: ["third\nline"] }).snapshot;
		expect(snapshot.openItems.map((i) => `${i.id}:${i.text}`)).toEqual(["item_1:first", "item_3:third line"]);
	});

	it("pins and unpins observation ids once each", () => {
		let { snapshot } = applyTaskUpdate(EMPTY_TASK, { pin: ["obs_000001", "obs_000002", "obs_000001"] });
		expect(snapshot.pins).toEqual(["obs_000001", "obs_000002"]);
		snapshot = applyTaskUpdate(snapshot, { unpin: ["obs_000001"] }).snapshot;
		expect(snapshot.pins).toEqual(["obs_000002"]);
	});

	it("rejects unknown items and over-long text, saying what is allowed, without changing the snapshot", () => {
		const { snapshot } = applyTaskUpdate(EMPTY_TASK, { add: ["a"] });
		expect(() => applyTaskUpdate(snapshot, { complete: ["item_9"] })).toThrow(
			/no open item "item_9"; open items: item_1/,
		);
		expect(() => applyTaskUpdate(snapshot, { focus: "x".repeat(1001) })).toThrow(/at most 1000/);
		expect(() => applyTaskUpdate(snapshot, { unpin: ["obs_000001"] })).toThrow(TaskUpdateError);
		expect(snapshot.openItems).toHaveLength(1);
	});
});

describe("rendering the task message", () => {
	it("renders the seed's sections in order", () => {
		const { snapshot } = applyTaskUpdate(EMPTY_TASK, {
			focus: "Finish archive read/search and package smoke.",
			add: ["Implement range reads."],
			pin: ["obs_000001"],
		});
		expect(renderTask(snapshot, { rootRequest: "Implement Prime Context from the current specification." })).toBe(
			[
				"<prime_context_task>",
				"ROOT_REQUEST",
				'"Implement Prime Context from the current specification."',
				"",
				"FOCUS",
				'"Finish archive read/search and package smoke."',
				"",
				"OPEN_ITEMS",
				"- [item_1] Implement range reads.",
				"",
				"PINNED_OUTPUTS",
				"- obs_000001",
				"</prime_context_task>",
			].join("\n"),
		);
	});

	it("renders nothing for an empty snapshot and leaves out empty sections", () => {
		expect(renderTask(EMPTY_TASK)).toBeNull();
		const { snapshot } = applyTaskUpdate(EMPTY_TASK, { add: ["only item"] });
		expect(renderTask(snapshot)).toBe("<prime_context_task>\nOPEN_ITEMS\n- [item_1] only item\n</prime_context_task>");
	});

	it("keeps text from closing the tag early", () => {
		const { snapshot } = applyTaskUpdate(EMPTY_TASK, {
			focus: "x</prime_context_task>y",
			add: ["</prime_context_task>"],
		});
		const text = renderTask(snapshot) ?? "";
		expect(text.match(/<\/prime_context_task>/g)).toHaveLength(1);
	});
});

describe("file task store", () => {
	let dir: string;
	beforeEach(async () => {
		dir = await mkdtemp(join(tmpdir(), "pc-task-"));
	});
	afterEach(async () => {
		await rm(dir, { recursive: true, force: true });
	});

	it("starts empty and persists updated snapshots with user-only permissions", async () => {
		const store = fileTaskStore(join(dir, "session"));
		expect(await store.load()).toEqual(EMPTY_TASK);
		const { snapshot } = applyTaskUpdate(EMPTY_TASK, { focus: "f", add: ["i"] });
		expect(await store.update(() => snapshot)).toEqual(snapshot);
		expect(await fileTaskStore(join(dir, "session")).load()).toEqual(snapshot);
		expect((await stat(join(dir, "session", "task.json"))).mode & 0o777).toBe(0o600);
		expect(JSON.parse(await readFile(join(dir, "session", "task.json"), "utf8")).focus).toBe("f");
	});

	it("stores nothing when the change throws", async () => {
		const store = fileTaskStore(dir);
		await store.update((current) => applyTaskUpdate(current, { add: ["keep"] }).snapshot);
		await expect(
			store.update((current) => applyTaskUpdate(current, { complete: ["item_9"] }).snapshot),
		).rejects.toThrow(TaskUpdateError);
		expect((await store.load()).openItems).toEqual([{ id: "item_1", text: "keep" }]);
		expect(await readdir(dir)).toEqual(["task.json"]);
	});

	it("loses no update when many are made at once", async () => {
		const stores = Array.from({ length: 4 }, () => fileTaskStore(dir));
		await Promise.all(
			Array.from({ length: 24 }, (_, i) =>
				stores[i % 4].update((current) => applyTaskUpdate(current, { add: [`item ${i}`] }).snapshot),
			),
		);
		const { openItems, nextItem } = await fileTaskStore(dir).load();
		expect(openItems).toHaveLength(24);
		expect(new Set(openItems.map((item) => item.id)).size).toBe(24);
		expect(nextItem).toBe(25);
	});

	it("takes over a lock left behind by a process that died", async () => {
		await writeFile(join(dir, "task.json.lock"), "");
		const old = new Date(Date.now() - 60_000);
		await utimes(join(dir, "task.json.lock"), old, old);
		await fileTaskStore(dir).update((current) => applyTaskUpdate(current, { focus: "after a crash" }).snapshot);
		expect((await fileTaskStore(dir).load()).focus).toBe("after a crash");
	});

	it("reports a corrupted snapshot file with its path and what to do", async () => {
		await writeFile(join(dir, "task.json"), "{ broken");
		const error = await fileTaskStore(dir)
			.load()
			.catch((e) => e);
		expect(error).toBeInstanceOf(TaskStoreError);
		expect(error.message).toContain(join(dir, "task.json"));
		expect(error.message).toMatch(/delete the file/);
	});
});
