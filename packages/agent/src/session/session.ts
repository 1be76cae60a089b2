import { randomBytes, randomUUID } from "node:crypto";
import {
	closeSync,
	existsSync,
	fstatSync,
	ftruncateSync,
	openSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { AgentMessage, ThinkingLevel } from "@mariozechner/pi-agent-core";
import { isSessionId, SESSION_ID_RULE } from "prime-agent-context";
import { ExitCode, UserError } from "../errors.js";
import { ensurePrivateDir, PRIVATE_FILE_MODE, writingTo } from "../home/index.js";
import { buildSessionContext, type SessionContext } from "./context.js";
import { repairTornTail, type SessionFileScan, saveTornFragment, scanSessionFile } from "./session-file.js";
import { lockSession, type SessionHolder, type SessionLock } from "./session-lock.js";
import {
	type CustomEntry,
	type NewEntry,
	SESSION_FORMAT_VERSION,
	type SessionEntry,
	type SessionHeader,
} from "./types.js";

export interface CreateSessionOptions {
	/** Directory holding session files (`<agent dir>/sessions`). */
	dir: string;
	cwd: string;
	id?: string;
	parentSession?: string;
	/** A sub-agent's link to the parent entry that spawned it. */
	parentEntryId?: string | null;
	rlmChild?: SessionHeader["rlmChild"];
	/** This process runs the session: it is locked for it from its first write (see `Session.open`'s `holder`). */
	holder?: SessionHolder;
}

export interface AppendOptions {
	/**
	 * Write the file now, even before the first answer: the user recorded state worth keeping (a
	 * goal set with `/goal`), which leaving before any answer must not lose. Without it such an
	 * entry waits in memory for the first answer.
	 */
	keep?: boolean;
}

/**
 * One session: an append-only JSONL file (header line, then entries forming a tree).
 *
 * Contract:
 * - Nothing is written before the first assistant message (one that failed before producing any
 *   output does not count), unless an append or `keep()` asks to keep the session (see
 *   `AppendOptions.keep`); a session opened and closed leaves no file.
 * - After that, every entry is appended synchronously, so the file is always a valid JSONL prefix.
 * - An append the disk refuses (full, read-only) throws a `DiskWriteError` naming the file, leaves
 *   no part of its line in the file, and leaves the entry out of the tree too.
 * - The active branch is the path from the root to `leafId`; new entries hang under the leaf.
 *   Reopening a file makes its last entry the leaf.
 * - A file written without entry links (an older, linear file) is read as one branch in file order
 *   (see `placement.ts`) and left as it is until something is appended: then it is rewritten as a
 *   tree, its original kept beside it first (`linearBackup`), so the ids the entries were given
 *   stay theirs.
 * - A session opened or created with a `holder` is this process's alone (`<id>.lock` beside the file)
 *   from before its file is first read or written until `release()` or the process's end: a second
 *   run of it, in this process or another, is refused naming the holder (see `lockSession`).
 */
export class Session {
	readonly header: SessionHeader;
	readonly path: string;
	private readonly byId = new Map<string, SessionEntry>();
	private readonly ordered: SessionEntry[] = [];
	private leaf: string | null = null;
	private written: boolean;
	/** A torn last line found on open, repaired before the first append. */
	private tornTail: SessionFileScan["tornTail"];
	/** The file's length before an append that failed part-way and could not be cut back then. */
	private cutTo: number | undefined;
	/** Who runs the session here, and the lock taken for it (a new session's at its first write). */
	private holder: SessionHolder | undefined;
	private lock: SessionLock | undefined;
	/** Set when opened `upToDamage`: the line where reading stopped. */
	damagedLine: number | undefined;
	/** What is wrong with `damagedLine`, when it parses as JSON. */
	damage: string | undefined;
	/** Set with `damagedLine`: the lines after it that hold entries, which were not read. */
	unreadLines: SessionFileScan["unreadLines"];
	/**
	 * What was decided while reading the file that the user should know: entries placed in file
	 * order, a compaction's kept part that could not be found. Each a sentence naming the lines.
	 */
	readNotes: string[] = [];
	/**
	 * Set for a file read in file order, until it is rewritten as a tree before the next append:
	 * where its original is kept then.
	 */
	linearBackup: string | undefined;
	/**
	 * What names this file in advice (`--resume`, `--fork`, `sessions`): its id, which finds a file in
	 * the agent home's sessions folder; for a file elsewhere, the path it was opened by.
	 */
	commandRef: string;

	private constructor(header: SessionHeader, path: string, entries: SessionEntry[], written: boolean) {
		this.header = header;
		this.commandRef = header.id;
		this.path = path;
		this.written = written;
		for (const entry of entries) this.remember(entry);
		this.leaf = entries.length > 0 ? (entries[entries.length - 1] as SessionEntry).id : null;
	}

	/** A new session, held in memory until its first assistant message. */
	static create(options: CreateSessionOptions): Session {
		const id = options.id ?? randomUUID();
		const header: SessionHeader = {
			type: "session",
			version: SESSION_FORMAT_VERSION,
			id,
			timestamp: new Date().toISOString(),
			cwd: options.cwd,
			...(options.parentSession ? { parentSession: options.parentSession } : {}),
			...(options.parentEntryId !== undefined ? { parentEntryId: options.parentEntryId } : {}),
			...(options.rlmChild ? { rlmChild: options.rlmChild } : {}),
		};
		const session = new Session(header, join(options.dir, `${id}.jsonl`), [], false);
		session.holder = options.holder;
		return session;
	}

	/**
	 * Open a session file without changing it. A torn last line (the process died mid-write) is
	 * left out and moved aside into `<file>.torn` before the next append, so the next entry never
	 * lands on it. A damaged line elsewhere is an error naming the line, unless `upToDamage` asks
	 * for the entries before it (a fork continues from the last good entry). `ref` is what names the
	 * file in advice when it is not its id (see `commandRef`, `sessionCommandRef`). With `holder`
	 * the session is locked for this process before the file is read, so a run that ends meanwhile
	 * has written everything it will (see the class contract).
	 */
	static open(path: string, options: { upToDamage?: boolean; ref?: string; holder?: SessionHolder } = {}): Session {
		const { holder } = options;
		// The file's name is its id (checked once it is read); a file that is not a session is refused then.
		const id = basename(path).replace(/\.jsonl$/, "");
		const ref = options.ref ?? id;
		const lock = holder
			? lockSession(path, id, holder, { ref, retry: `resume it with \`prime-agent -r ${ref}\`` })
			: undefined;
		try {
			const session = Session.read(path, options);
			session.holder = holder;
			session.lock = lock;
			return session;
		} catch (error) {
			lock?.release();
			throw error;
		}
	}

	private static read(path: string, options: { upToDamage?: boolean; ref?: string }): Session {
		let scan: SessionFileScan;
		try {
			scan = scanSessionFile(path);
		} catch (error) {
			// Not found, not allowed, a folder, more than 2 GB: the reason, in the system's words.
			const reason = (error as Error).message.replace(/^[A-Z_]+: /, "");
			throw new UserError(
				`Session file ${path} cannot be read (${reason}).`,
				"List sessions with `prime-agent sessions`.",
			);
		}
		const header = scan.records[0] as SessionHeader | undefined;
		if (!header && scan.damagedLine !== undefined) {
			throw new UserError(
				`Session file ${path} is damaged at line ${scan.damagedLine} (${scan.damage ?? "not JSON"}): it has no header, so nothing in it can be resumed or forked.`,
				"Start a new session; this file was left untouched.",
			);
		}
		if (header?.type !== "session") {
			throw new UserError(`${path} is not a prime-agent session file.`, "Pass a session id or a .jsonl session path.");
		}
		refuseForeignId(path, header.id);
		if (scan.damagedLine !== undefined && !options.upToDamage) {
			const unread = unreadText(scan.unreadLines);
			throw new UserError(
				`Session file ${path} is damaged at line ${scan.damagedLine}${scan.damage ? ` (${scan.damage})` : ""}.${unread ? ` ${unread}.` : ""}`,
				`${afterDamage(scan.records.length - 1, scan.damagedLine, options.ref ?? header.id)}; this file was left untouched.`,
			);
		}
		if (header.version > SESSION_FORMAT_VERSION) {
			throw new UserError(
				`${path} was written by a newer prime-agent (format ${header.version}).`,
				"Upgrade prime-agent to resume it.",
				ExitCode.usage,
			);
		}
		const session = new Session(header, path, scan.records.slice(1) as SessionEntry[], true);
		session.tornTail = scan.tornTail;
		session.damagedLine = scan.damagedLine;
		session.damage = scan.damage;
		session.unreadLines = scan.unreadLines;
		if (scan.linearLines.length > 0) {
			session.linearBackup = freeBackupPath(path);
			session.readNotes.push(linearNote(path, scan.linearLines));
		}
		session.readNotes.push(...scan.repairs);
		if (options.ref) session.commandRef = options.ref;
		return session;
	}

	get id(): string {
		return this.header.id;
	}

	get cwd(): string {
		return this.header.cwd;
	}

	/** Folder for this session's artifacts (complete cell outputs, kernel state). */
	get artifactDir(): string {
		return join(dirname(this.path), this.id);
	}

	/** Whether the file exists on disk yet. */
	get persisted(): boolean {
		return this.written;
	}

	get leafId(): string | null {
		return this.leaf;
	}

	/** Every entry, in append order. */
	get entries(): readonly SessionEntry[] {
		return this.ordered;
	}

	entry(id: string): SessionEntry | undefined {
		return this.byId.get(id);
	}

	/** The active branch, root first, ending at `leafId` (or at `leafId` given). */
	branch(leafId: string | null = this.leaf): SessionEntry[] {
		const path: SessionEntry[] = [];
		let current = leafId ? this.byId.get(leafId) : undefined;
		while (current) {
			path.push(current);
			current = current.parentId ? this.byId.get(current.parentId) : undefined;
		}
		return path.reverse();
	}

	/** The context the model sees when the session continues from the active branch. */
	context(): SessionContext {
		return buildSessionContext(this.branch());
	}

	/** Append an entry under the leaf and make it the leaf. Returns its id. */
	append(entry: NewEntry, options: AppendOptions = {}): string {
		const full = {
			...entry,
			id: this.newId(),
			parentId: this.leaf,
			timestamp: new Date().toISOString(),
		} as SessionEntry;
		// Written first: an entry the file did not take is not in the tree (the next one hangs where the file's last does).
		this.persist(full, options.keep === true);
		this.remember(full);
		this.leaf = full.id;
		return full.id;
	}

	appendMessage(message: AgentMessage): string {
		return this.append({ type: "message", message });
	}

	appendModelChange(provider: string, modelId: string): string {
		return this.append({ type: "model_change", provider, modelId });
	}

	appendThinkingLevelChange(thinkingLevel: ThinkingLevel): string {
		return this.append({ type: "thinking_level_change", thinkingLevel });
	}

	appendCustom(customType: string, data: unknown, options: AppendOptions = {}): string {
		return this.append({ type: "custom", customType, data }, options);
	}

	/**
	 * Write the file now if it is not written yet, with every entry so far: state the user recorded
	 * outside the session's entries (a Prime Context focus, kept under the session's id) is found
	 * again by `-c` and `--resume` (see `AppendOptions.keep`).
	 */
	keep(): void {
		if (!this.written) this.writeAll();
	}

	/** Let other runs have the session (see the class contract); a session never locked ignores it. */
	release(): void {
		this.lock?.release();
		this.lock = undefined;
	}

	/** Custom entries of one type on the active branch, newest first. */
	customEntries(customType: string): CustomEntry[] {
		return this.branch()
			.filter((entry): entry is CustomEntry => entry.type === "custom" && entry.customType === customType)
			.reverse();
	}

	/**
	 * Move the leaf back to `entryId` (null: before the first entry): the next append starts a new
	 * branch there. With a summary, the abandoned branch is summarised where the new one starts.
	 */
	branchFrom(entryId: string | null, summary?: string): void {
		if (entryId !== null && !this.byId.has(entryId)) {
			throw new UserError(`No entry ${entryId} in session ${this.id}.`, "Pick an entry id from the session file.");
		}
		const left = this.leaf;
		this.leaf = entryId;
		if (summary !== undefined && left) this.append({ type: "branch_summary", fromId: left, summary });
	}

	/**
	 * A new session whose file holds the path from the root to `entryId` (default: the leaf),
	 * with `parentSession` pointing back here. Written at once if that path has an assistant message.
	 * `holder`: this process runs the fork (see the class contract).
	 */
	fork(entryId: string | null = this.leaf, options: { dir?: string; holder?: SessionHolder } = {}): Session {
		if (entryId !== null && !this.byId.has(entryId)) {
			throw new UserError(`No entry ${entryId} in session ${this.id}.`, "Pick an entry id from the session file.");
		}
		const dir = options.dir ?? dirname(this.path);
		const forked = Session.create({ dir, cwd: this.cwd, parentSession: this.path, holder: options.holder });
		const path = this.branch(entryId);
		for (const entry of path) forked.remember(entry);
		forked.leaf = entryId;
		if (path.some(isAnswerEntry)) forked.writeAll();
		return forked;
	}

	private remember(entry: SessionEntry): void {
		this.byId.set(entry.id, entry);
		this.ordered.push(entry);
	}

	private persist(entry: SessionEntry, keep: boolean): void {
		if (this.written) {
			writingTo(
				this.path,
				() => {
					if (this.linearBackup) this.rewriteAsTree(this.linearBackup);
					if (this.tornTail) {
						repairTornTail(this.path, this.tornTail);
						this.tornTail = undefined;
					}
					this.appendLine(`${JSON.stringify(entry)}\n`);
				},
				`resume it with \`prime-agent -r ${this.commandRef}\``,
			);
		} else if (keep || isAnswerEntry(entry)) {
			this.writeAll([entry]);
		}
	}

	/**
	 * Append one whole line: a write cut short (the disk filled up part-way) is cut back off the
	 * file, so the next entry never lands on half a line.
	 */
	private appendLine(line: string): void {
		const fd = openSync(this.path, "a");
		try {
			if (this.cutTo !== undefined) {
				ftruncateSync(fd, this.cutTo);
				this.cutTo = undefined;
			}
			const before = fstatSync(fd).size;
			try {
				writeFileSync(fd, line);
			} catch (error) {
				try {
					ftruncateSync(fd, before);
				} catch {
					this.cutTo = before;
				}
				throw error;
			}
		} finally {
			closeSync(fd);
		}
	}

	/**
	 * Replace a file read in file order by the same entries with their links written out, keeping
	 * its bytes in `backup` first. A write that fails leaves the file as it was (and no backup).
	 */
	private rewriteAsTree(backup: string): void {
		const original = readFileSync(this.path);
		const temp = `${this.path}.${process.pid}.tmp`;
		let backedUp = false;
		try {
			// Never over another file: "wx". Removed again below only when made here.
			const fd = openSync(backup, "wx", PRIVATE_FILE_MODE);
			backedUp = true;
			try {
				writeFileSync(fd, original);
			} finally {
				closeSync(fd);
			}
			// A fragment torn off the end is kept where it always goes; the tree holds only whole entries.
			if (this.tornTail && !this.tornTail.parsed) saveTornFragment(this.path, this.tornTail);
			const lines = [this.header, ...this.ordered].map((record) => `${JSON.stringify(record)}\n`).join("");
			writeFileSync(temp, lines, { mode: PRIVATE_FILE_MODE });
			renameSync(temp, this.path);
		} catch (error) {
			rmSync(temp, { force: true });
			if (backedUp) rmSync(backup, { force: true });
			throw error;
		}
		this.tornTail = undefined;
		this.linearBackup = undefined;
	}

	/** Write the whole file (the first answer, a fork, a kept entry): a write that fails leaves no file. */
	private writeAll(extra: SessionEntry[] = []): void {
		const lines = [this.header, ...this.ordered, ...extra].map((record) => `${JSON.stringify(record)}\n`).join("");
		const retry = "send the request again (nothing of this session was saved)";
		// Locked before the file exists: `-c` in another process may pick the session up once it does.
		if (this.holder && !this.lock)
			this.lock = lockSession(this.path, this.id, this.holder, { ref: this.commandRef, retry });
		writingTo(
			this.path,
			() => {
				ensurePrivateDir(dirname(this.path));
				try {
					writeFileSync(this.path, lines, { mode: PRIVATE_FILE_MODE, flag: "wx" });
				} catch (error) {
					// Ours (made by this call, "wx"), unless it was there before.
					if ((error as NodeJS.ErrnoException).code !== "EEXIST") rmSync(this.path, { force: true });
					throw error;
				}
			},
			retry,
		);
		this.written = true;
	}

	private newId(): string {
		for (;;) {
			const id = randomBytes(4).toString("hex");
			if (!this.byId.has(id)) return id;
		}
	}
}

/**
 * Why the header's id cannot be this file's session id, or undefined when it can. A session's id
 * names its artifact folder beside the file (kernel state, cell outputs), so an id that is a path
 * (`../../elsewhere`) or another session's id would point the session at files it did not write.
 * Ids follow Prime Context's rule for ids (a safe file name) and match the file name.
 */
export function foreignIdProblem(path: string, id: string): string | undefined {
	if (!isSessionId(id)) {
		return `its header's id ${JSON.stringify(id.slice(0, 200))} is not a session id (${SESSION_ID_RULE})`;
	}
	const name = basename(path);
	return name === `${id}.jsonl` ? undefined : `its header names session ${id}, not ${name.replace(/\.jsonl$/, "")}`;
}

function refuseForeignId(path: string, id: string): void {
	const problem = foreignIdProblem(path, id);
	if (!problem) return;
	throw new UserError(
		`Session file ${path} cannot be opened: ${problem}. Its header was changed or it was not written by prime-agent, and it could point the session at files it did not write.`,
		isSessionId(id)
			? `If the file was only renamed, rename it back to ${id}.jsonl; otherwise start a new session. The file was left untouched.`
			: "Start a new session; the file was left untouched.",
		ExitCode.usage,
	);
}

/**
 * An assistant message that carries something: a request that failed or was stopped before any
 * output (connection refused, bad key) is not an answer, so it does not create the file.
 */
function isAnswerEntry(entry: SessionEntry): boolean {
	if (entry.type !== "message" || entry.message.role !== "assistant") return false;
	const { stopReason, content } = entry.message;
	if (stopReason !== "error" && stopReason !== "aborted") return true;
	return content.some((part) => (part.type === "text" ? part.text !== "" : true));
}

/** `<file>.linear`, or `<file>.linear.2`, … when that is taken: where a linear file's original is kept. */
function freeBackupPath(path: string): string {
	for (let n = 1; ; n++) {
		const candidate = `${path}.linear${n > 1 ? `.${n}` : ""}`;
		if (!existsSync(candidate)) return candidate;
	}
}

/** What the user hears of a file read in file order. */
function linearNote(path: string, lines: number[]): string {
	const count = lines.length;
	return `Session file ${path} has ${count} ${count === 1 ? "entry" : "entries"} written without entry links (an older, linear format; ${lineRanges(lines)}): each was placed after the entry on the line before it, as one conversation.`;
}

/** "line 4", "lines 2–1048", "lines 2–9, 12, 15–20": at most five ranges, then how many more. */
function lineRanges(lines: readonly number[]): string {
	const ranges: string[] = [];
	for (let index = 0; index < lines.length; ) {
		let end = index;
		while (end + 1 < lines.length && (lines[end + 1] as number) === (lines[end] as number) + 1) end++;
		ranges.push(end > index ? `${lines[index]}–${lines[end]}` : `${lines[index]}`);
		index = end + 1;
	}
	const shown = ranges.slice(0, 5).join(", ");
	const more = ranges.length > 5 ? ` and ${ranges.length - 5} more ranges` : "";
	return `${lines.length === 1 ? "line" : "lines"} ${shown}${more}`;
}

/** "The 138 entries after it (lines 9–146) are not read", or "" when nothing follows the damage. */
export function unreadText(unread: SessionFileScan["unreadLines"]): string {
	if (!unread) return "";
	const where = unread.count === 1 ? `line ${unread.first}` : `lines ${unread.first}–${unread.last}`;
	return `${unread.count === 1 ? "The entry" : `The ${unread.count} entries`} after it (${where}) ${unread.count === 1 ? "is" : "are"} not read`;
}

/**
 * What can be done with a file damaged at `line` holding `entries` good entries before it, named
 * `ref` on the command line: continue from them in a new file, or, with none, repair or start anew.
 */
export function afterDamage(entries: number, line: number, ref: string): string {
	if (entries === 0) {
		return `No entry comes before line ${line}, so there is nothing to continue from: repair that line by hand (line 1 is the header), or start a new session`;
	}
	return `Continue from its last good entry in a new file with \`prime-agent --fork ${ref}\``;
}
