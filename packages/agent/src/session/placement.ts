import { compactionBoundary } from "./context.js";
import type { CompactionEntry, SessionEntry } from "./types.js";
import { entryProblem, headerProblem } from "./validate.js";

/**
 * Where each record of a session file goes in the tree, decided line by line as the file is read.
 *
 * An entry hangs under its `parentId`, which must be on an earlier line. An entry written without
 * `id` and `parentId` (an older, linear file: one conversation in file order, as pi's version-1
 * files) is placed under the entry on the line before it and takes the id `line-<n>` from its line,
 * so every read of the file gives it the same id until the file is rewritten as a tree (see
 * `Session`). A compaction whose first kept entry is missing or not before it on its branch keeps
 * what the model saw verbatim before it (never less), and says so.
 */
export class EntryPlacer {
	private readonly byId = new Map<string, SessionEntry>();
	private first = true;
	/** Id of the entry on the last line read: where an entry without a parent goes. */
	private previous: string | null = null;
	/** Lines of the entries written without `id` or `parentId`, given them here. */
	readonly linearLines: number[] = [];
	/** What was decided for a compaction whose kept part could not be found, for the user. */
	readonly repairs: string[] = [];

	/**
	 * Why `record` (on line `line`) cannot come next in the file; undefined when it can: it is then
	 * given its place (an id, a parent) and remembered. `records` are those read so far, header
	 * first (a version-1 compaction names its first kept entry by its index among them).
	 */
	place(record: unknown, line: number, records: readonly unknown[]): string | undefined {
		if (this.first) {
			this.first = false;
			// Anything but a session header is not a session file at all; the caller says so.
			if (!isObject(record) || record.type !== "session") return undefined;
			// The oldest files have no version: they are read as the first format.
			if (!("version" in record)) record.version = 1;
			return headerProblem(record);
		}
		if (isObject(record) && record.type !== "session") this.fillMissingLinks(record, line, records);
		const problem = entryProblem(record);
		if (problem) return problem;
		const entry = record as SessionEntry;
		const { id, parentId } = entry;
		if (this.byId.has(id)) return `the entry id ${id} was used by an earlier line`;
		if (parentId === id) return `the entry ${id} is its own parent`;
		if (parentId !== null && !this.byId.has(parentId)) {
			return `the parent ${parentId} of entry ${id} is not on an earlier line`;
		}
		if (entry.type === "compaction") this.checkKeptPart(entry, line);
		this.byId.set(id, entry);
		this.previous = id;
		return undefined;
	}

	/**
	 * An entry written without a parent hangs under the previous line's entry; one without an id is
	 * named by its line. A compaction without its first kept entry is left for `checkKeptPart`.
	 */
	private fillMissingLinks(record: Record<string, unknown>, line: number, records: readonly unknown[]): void {
		if (!("id" in record) || !("parentId" in record)) this.linearLines.push(line);
		if (!("id" in record)) record.id = `line-${line}`;
		if (!("parentId" in record)) record.parentId = this.previous;
		if (record.type !== "compaction" || record.firstKeptEntryId != null) return;
		// pi's version-1 compaction names its first kept entry by its index among the records.
		const index = record.firstKeptEntryIndex;
		const target = typeof index === "number" ? records[index] : undefined;
		if (isObject(target) && target.type !== "session" && typeof target.id === "string") {
			record.firstKeptEntryId = target.id;
			delete record.firstKeptEntryIndex;
		}
		// Left for `checkKeptPart` to decide (the entry's shape is checked first).
		if (record.firstKeptEntryId == null) record.firstKeptEntryId = "";
	}

	/**
	 * The model sees a compaction's summary, then its branch from `firstKeptEntryId` on. When that
	 * entry is not before the compaction on its branch, nothing says where the kept part started, so
	 * everything the model saw verbatim before this compaction stays (it may take a compaction more
	 * to fit, but no cell is lost).
	 */
	private checkKeptPart(compaction: CompactionEntry, line: number): void {
		const before = this.branchTo(compaction.parentId);
		if (before.some((entry) => entry.id === compaction.firstKeptEntryId)) return;
		const kept = before[compactionBoundary(before).start];
		const named = compaction.firstKeptEntryId
			? `names ${JSON.stringify(compaction.firstKeptEntryId.slice(0, 100))} as its first kept entry, which is not before it on its branch`
			: "does not name its first kept entry";
		compaction.firstKeptEntryId = kept?.id ?? compaction.id;
		if (!kept) return;
		const count = before.length - before.indexOf(kept);
		this.repairs.push(
			`The compaction on line ${line} ${named}: the model sees its summary and all ${count} entries before it from ${kept.id} on, as before that compaction; the next compaction shortens them again.`,
		);
	}

	/** The branch ending at `leafId`, root first. */
	private branchTo(leafId: string | null): SessionEntry[] {
		const path: SessionEntry[] = [];
		for (let id = leafId; id !== null; ) {
			const entry = this.byId.get(id);
			if (!entry) break;
			path.push(entry);
			id = entry.parentId;
		}
		return path.reverse();
	}
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
