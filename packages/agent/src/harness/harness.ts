import { join } from "node:path";
import {
	checkKind,
	checkName,
	checkText,
	deletableName,
	emptyHarnessFile,
	HarnessError,
	isoNow,
	newEntry,
	parseHarnessFile,
	putEntry,
	readKind,
	removeEntry,
} from "./entries.js";
import { SharedJsonFile } from "./locked-file.js";
import {
	HARNESS_SCOPES,
	type HarnessEntry,
	type HarnessFile,
	type HarnessKind,
	type HarnessScope,
	type Refinement,
	type RefinementLog,
	type ScopedEntry,
} from "./types.js";

export const HARNESS_FILE = "harness.json";
export const REFINEMENTS_FILE = "refinements.json";

/** Where the stores live: the session's `harness/` folder (local, and the refinement log) and the agent home's. */
export interface HarnessDirs {
	local: string;
	global: string;
}

/**
 * The two stores of harness entries and the session's refinement log, as files on disk. Every
 * read notices a file another process changed (the kernel writes the same files); every write is
 * atomic, user-only, under the file's lock.
 */
export class Harness {
	private readonly stores: Record<HarnessScope, SharedJsonFile<HarnessFile>>;
	readonly log: SharedJsonFile<RefinementLog>;

	constructor(
		readonly dirs: HarnessDirs,
		private readonly clock: () => number = Date.now,
	) {
		const store = (dir: string) => new SharedJsonFile(join(dir, HARNESS_FILE), parseHarnessFile, emptyHarnessFile);
		this.stores = { local: store(dirs.local), global: store(dirs.global) };
		this.log = new SharedJsonFile(join(dirs.local, REFINEMENTS_FILE), parseRefinementLog, () => ({
			version: 1,
			refinements: [],
		}));
	}

	now(): number {
		return this.clock();
	}

	path(scope: HarnessScope): string {
		return this.stores[scope].path;
	}

	/** Every entry of both stores (local first), each with its scope; a store that cannot be read throws. */
	entries(kind?: HarnessKind): ScopedEntry[] {
		return HARNESS_SCOPES.flatMap((scope) => this.scoped(scope, kind));
	}

	/**
	 * The entries of the stores that can be read, and one line for each store that cannot (a
	 * damaged global store does not hide the session's entries from the index or `/harness`).
	 */
	readable(kind?: HarnessKind): { entries: ScopedEntry[]; problems: string[] } {
		const entries: ScopedEntry[] = [];
		const problems: string[] = [];
		for (const scope of HARNESS_SCOPES) {
			try {
				entries.push(...this.scoped(scope, kind));
			} catch (error) {
				// The parser's message quotes the file; one line keeps the index's lines intact.
				problems.push(`The ${scope} store could not be read: ${(error as Error).message.replace(/\s+/g, " ")}`);
			}
		}
		return { entries, problems };
	}

	private scoped(scope: HarnessScope, kind?: HarnessKind): ScopedEntry[] {
		const entries = this.stores[scope].read().entries.filter((entry) => !kind || entry.kind === kind);
		return entries.map((entry) => ({ ...entry, scope }));
	}

	/** The entry of that kind and name: in `scope` when given, else the local one, else the global one. */
	find(kind: HarnessKind, name: string, scope?: HarnessScope): ScopedEntry | undefined {
		for (const where of scope ? [scope] : (["local", "global"] as const)) {
			const entry = this.stores[where].read().entries.find((e) => e.kind === kind && e.name === name);
			if (entry) return { ...entry, scope: where };
		}
		return undefined;
	}

	/**
	 * Change one entry atomically: `decide` sees the entry as it is now (read under the lock) and
	 * returns the entry to store, `null` to delete it, or throws to refuse. Returns before and after.
	 */
	change(
		scope: HarnessScope,
		kind: HarnessKind,
		name: string,
		decide: (current: HarnessEntry | null) => HarnessEntry | null,
	): { before: HarnessEntry | null; after: HarnessEntry | null } {
		return this.stores[scope].update((file) => {
			const before = file.entries.find((entry) => entry.kind === kind && entry.name === name) ?? null;
			const after = decide(before);
			if (after) putEntry(file, after);
			else removeEntry(file, kind, name);
			return { write: before !== null || after !== null, result: { before, after } };
		});
	}

	create(kindArg: unknown, nameArg: unknown, textArg: unknown, scope: HarnessScope = "local"): HarnessEntry {
		const kind = checkKind(kindArg);
		const name = checkName(nameArg);
		const text = checkText(textArg);
		const at = isoNow(this.clock());
		return this.change(scope, kind, name, (current) => {
			if (current) throw new HarnessError(`a ${kind} named "${name}" already exists (${scope}); update it instead.`);
			return newEntry(kind, name, text, at);
		}).after as HarnessEntry;
	}

	update(kindArg: unknown, nameArg: unknown, textArg: unknown, scope?: HarnessScope): ScopedEntry {
		const text = checkText(textArg);
		return this.changeExisting(kindArg, nameArg, scope, (current, at) => ({ ...current, text, updatedAt: at }));
	}

	/** Delete an entry; one whose name breaks the rules (written by hand) can be deleted too. */
	delete(kindArg: unknown, nameArg: unknown, scope?: HarnessScope): ScopedEntry {
		return this.changeExisting(kindArg, nameArg, scope, () => null, true);
	}

	/** Count a use of an entry (read in full, or a spec given to a sub-agent) and return it. */
	use(kindArg: unknown, nameArg: unknown, scope?: HarnessScope): ScopedEntry {
		return this.changeExisting(kindArg, nameArg, scope, (current, at) => ({
			...current,
			uses: current.uses + 1,
			lastUsedAt: at,
		}));
	}

	/**
	 * Change an entry that must exist (in `scope`, else local before global): `edit` returns its new
	 * state or null to delete it. Returns the entry after the change (before it, for a delete).
	 */
	private changeExisting(
		kindArg: unknown,
		nameArg: unknown,
		scope: HarnessScope | undefined,
		edit: (current: HarnessEntry, at: string) => HarnessEntry | null,
		anyExistingName = false,
	): ScopedEntry {
		const kind = checkKind(kindArg);
		const name = anyExistingName
			? deletableName(nameArg, (name) => this.find(kind, name, scope) !== undefined)
			: checkName(nameArg);
		const found = this.find(kind, name, scope);
		if (!found) throw missing(kind, name, scope);
		const where = found.scope;
		const at = isoNow(this.clock());
		const { before, after } = this.change(where, kind, name, (current) => {
			if (!current) throw missing(kind, name, where);
			return edit(current, at);
		});
		return { ...((after ?? before) as HarnessEntry), scope: where };
	}

	refinements(): Refinement[] {
		return this.log.read().refinements;
	}

	/** Append a refinement to the log under the next id (`ref_0001`, ...) and return it. */
	record(refinement: Omit<Refinement, "id" | "at">): Refinement {
		const at = isoNow(this.clock());
		return this.log.update((log) => {
			const last = log.refinements.at(-1);
			const number = (last ? Number(last.id.replace(/^ref_/, "")) || log.refinements.length : 0) + 1;
			const recorded: Refinement = { id: `ref_${String(number).padStart(4, "0")}`, at, ...refinement };
			log.refinements.push(recorded);
			return { write: true, result: recorded };
		});
	}

	/** Identity of all three files' current content: unchanged while nothing was written. */
	signature(): string {
		return [this.stores.local.signature, this.stores.global.signature, this.log.signature].join("|");
	}
}

function missing(kind: HarnessKind, name: string, scope?: HarnessScope): HarnessError {
	return new HarnessError(
		`no ${kind} named "${name}"${scope ? ` in the ${scope} store` : ""}; rlm.harness.list_${kind === "memory" ? "memories" : `${kind}s`}() lists them.`,
	);
}

function parseRefinementLog(raw: unknown, path: string): RefinementLog {
	const value = raw as { version?: unknown; refinements?: unknown };
	if (typeof raw !== "object" || raw === null || value.version !== 1 || !Array.isArray(value.refinements)) {
		throw new Error(`${path} is not a refinement log (version 1 with a "refinements" list); fix it or move it aside.`);
	}
	// Edits recorded under a kind's old name roll back as the kind it became.
	for (const refinement of value.refinements as Refinement[]) {
		for (const edit of Array.isArray(refinement?.edits) ? refinement.edits : []) {
			edit.kind = readKind(edit.kind) as string;
			for (const entry of [edit.before, edit.after]) if (entry) entry.kind = readKind(entry.kind) as HarnessKind;
		}
	}
	return raw as RefinementLog;
}
