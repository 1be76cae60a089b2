import { closeSync, openSync, readSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { type CellError, type DisplayData, TRUNCATION_MARKER, VISIBLE_OUTPUT_CAP } from "../types.js";
import { capError, capText, errorText } from "./format.js";
import type { CutText } from "./kernel-cut.js";

export interface CellOutputOptions {
	/** Bytes of complete output held in memory (all streams together) before spilling to files. */
	memoryLimit: number;
	/**
	 * The directory for spill files and the complete-output file; called only when a file is
	 * needed, so a cell with small output creates nothing on disk.
	 */
	dir: () => string;
	/** Base name of this cell's files, unique within `dir`. */
	name: string;
}

export interface CollectedOutput {
	stdout: string;
	stderr: string;
	result?: string;
	displays: DisplayData[];
	error?: CellError;
	truncated: { stdout: boolean; stderr: boolean; result: boolean; error: boolean };
	fullOutputPath?: string;
	fullOutputBytes: number;
	/**
	 * Set when a spill file or the complete-output file could not be written (folder gone, disk
	 * full): says which path and why. The visible output is still whole; the complete output is not
	 * on disk, and `fullOutputPath` is absent.
	 */
	fileError?: string;
}

const COPY_BLOCK = 1 << 20;

/** One output stream: a capped visible prefix plus every byte, in memory or in a spill file. */
class StreamRecord {
	visible = "";
	truncated = false;
	bytes = 0;
	endsWithNewline = false;
	chunks: string[] = [];
	spillPath?: string;
	spillFd?: number;

	constructor(readonly name: string) {}

	get empty(): boolean {
		return this.bytes === 0;
	}
}

/**
 * Collects one cell's output. Each stream's visible text is capped at VISIBLE_OUTPUT_CAP characters
 * and ends with TRUNCATION_MARKER when cut; the complete output is kept too, in memory up to
 * `memoryLimit` bytes and in spill files beyond, so memory stays bounded however much is printed.
 * `finish()` writes the complete output (in the `formatCellOutput` layout) to one file when any part
 * was cut or spilled; that file is never written again.
 */
export class CellOutput {
	private readonly stdout = new StreamRecord("stdout");
	private readonly stderr = new StreamRecord("stderr");
	private memoryBytes = 0;
	private spilling = false;
	private result?: string;
	/** Set when the kernel cut the result: its whole text is in the kernel's file. */
	private resultCut?: CutText;
	private error?: CellError;
	/** Set when the kernel cut the error: its whole text is in the kernel's file. */
	private errorCut?: CutText;
	private readonly displays: DisplayData[] = [];
	private fileError?: string;
	private displayChars = 0;

	constructor(private readonly options: CellOutputOptions) {}

	append(name: "stdout" | "stderr", text: string): void {
		if (text.length === 0) return;
		const stream = name === "stdout" ? this.stdout : this.stderr;
		if (!stream.truncated) {
			const room = VISIBLE_OUTPUT_CAP + 1 - stream.visible.length;
			stream.visible += text.length > room ? text.slice(0, room) : text;
			if (stream.visible.length > VISIBLE_OUTPUT_CAP) stream.truncated = true;
		}
		const bytes = Buffer.byteLength(text, "utf8");
		stream.bytes += bytes;
		stream.endsWithNewline = text.endsWith("\n");
		if (this.fileError) return; // the complete output is lost already: keep only the visible part
		if (this.spilling) {
			this.spill(stream, text);
			return;
		}
		stream.chunks.push(text);
		this.memoryBytes += bytes;
		if (this.memoryBytes > this.options.memoryLimit) {
			this.spilling = true;
			for (const record of [this.stdout, this.stderr]) {
				const held = record.chunks.join("");
				record.chunks = [];
				if (held.length > 0) this.spill(record, held);
			}
			this.memoryBytes = 0;
		}
	}

	/**
	 * The result's `text/plain`: whole (`finish` caps what is shown), or already cut by the kernel
	 * (`cut`), the whole text then coming from the kernel's file.
	 */
	setResult(text: string, cut?: CutText): void {
		this.removeKernelFile(this.resultCut);
		this.result = text;
		this.resultCut = cut;
		if (cut?.error) this.fail(`The kernel could not save the whole result (${cut.error})`);
	}

	/** The error, whole or already cut by the kernel, as for `setResult`. */
	setError(error: CellError, cut?: CutText): void {
		this.removeKernelFile(this.errorCut);
		this.error = error;
		this.errorCut = cut;
		if (cut?.error) this.fail(`The kernel could not save the whole error (${cut.error})`);
	}

	/** Keeps an error already seen on iopub over the reply's copy (the kernel names the same file in both). */
	setErrorIfMissing(error: CellError, cut?: CutText): void {
		if (!this.error) this.setError(error, cut);
	}

	/**
	 * Keeps a display whole while it is small (or was cut by the kernel, see `saved`) and the
	 * displays held stay within `memoryLimit`; otherwise writes it whole to a JSON file
	 * (`fullDataPath`) and keeps only its `text/plain` (capped), so a cell showing many tables
	 * cannot fill the host's memory. A display whose part the kernel could not save fails the
	 * complete output, as a file the host cannot write does.
	 */
	addDisplay(display: DisplayData): void {
		const lost = display.saved?.find((saved) => saved.error);
		if (lost) this.fail(`The kernel could not save the ${lost.mimeType} of a display (${lost.error})`);
		const size = JSON.stringify(display.data).length;
		// A display the kernel cut is its capped text/plain and a line per saved part: kept as sent.
		const small = size <= VISIBLE_OUTPUT_CAP || display.saved !== undefined;
		if (small && this.displayChars + size <= this.options.memoryLimit) {
			this.displayChars += size;
			this.displays.push(display);
			return;
		}
		const path = this.filePath(`${this.options.name}.display-${this.displays.length + 1}.json`);
		const plain = display.data["text/plain"];
		// The kernel's cut text ends with the lines naming the saved parts: kept whole.
		const cap = display.saved ? Number.POSITIVE_INFINITY : VISIBLE_OUTPUT_CAP;
		const shown = typeof plain === "string" ? capText(plain, cap, TRUNCATION_MARKER).text : "";
		const kept: DisplayData = { data: shown ? { "text/plain": shown } : {}, metadata: {} };
		if (display.saved) kept.saved = display.saved;
		if (path) {
			try {
				writeFileSync(path, JSON.stringify(display), { mode: 0o600 });
				kept.fullDataPath = path;
			} catch (error) {
				this.fail(`Could not write the display file ${path} (${reasonOf(error)})`);
			}
		}
		this.displayChars += JSON.stringify(kept.data).length;
		this.displays.push(kept);
	}

	/**
	 * Closes the spill files and writes the complete-output file if one is needed, with `notes` (what
	 * the caller knows is missing) as its last lines. Never throws: a file that cannot be written is
	 * reported in `fileError`.
	 */
	finish(notes: string[] = []): CollectedOutput {
		this.closeSpills();
		const stdout = capText(this.stdout.visible, VISIBLE_OUTPUT_CAP, TRUNCATION_MARKER);
		const stderr = capText(this.stderr.visible, VISIBLE_OUTPUT_CAP, TRUNCATION_MARKER);
		// What the kernel cut is shown as it was sent: capping it again would count the cut text.
		const result =
			this.result === undefined
				? undefined
				: this.resultCut
					? { text: this.result, truncated: true }
					: capText(this.result, VISIBLE_OUTPUT_CAP, TRUNCATION_MARKER);
		const error =
			this.error && (this.errorCut ? { error: this.error, truncated: true } : capError(this.error, VISIBLE_OUTPUT_CAP));
		const sections = this.sections(notes);
		const fullOutputBytes = sections.reduce((sum, section) => sum + section.bytes + (section.newlineAfter ? 1 : 0), 0);
		const needsFile =
			this.spilling ||
			stdout.truncated ||
			stderr.truncated ||
			(result?.truncated ?? false) ||
			(error?.truncated ?? false);
		const fullOutputPath = needsFile && !this.fileError ? this.writeFullOutput(sections) : undefined;
		if (this.fileError) this.removeFiles();
		return {
			stdout: stdout.text,
			stderr: stderr.text,
			result: result?.text,
			displays: this.displays,
			error: error?.error,
			truncated: {
				stdout: stdout.truncated,
				stderr: stderr.truncated,
				result: result?.truncated ?? false,
				error: error?.truncated ?? false,
			},
			fullOutputPath,
			fullOutputBytes,
			fileError: this.fileError,
		};
	}

	/**
	 * Non-empty parts in layout order, as `formatCellOutput` joins them, then `notes` (one line each).
	 * A result or error the kernel cut is its file, whose whole text is copied.
	 */
	private sections(notes: string[]): Section[] {
		const parts: Array<Omit<Section, "newlineAfter"> & { endsWithNewline: boolean }> = [];
		for (const record of [this.stdout, this.stderr]) {
			if (!record.empty) parts.push({ record, bytes: record.bytes, endsWithNewline: record.endsWithNewline });
		}
		const texts: Array<[string, CutText | undefined]> = [
			[this.result ?? "", this.resultCut],
			[errorText(this.error), this.errorCut],
		];
		for (const [text, cut] of [...texts, ...notes.map((note): [string, undefined] => [note, undefined])]) {
			const file = cut?.path && this.kernelFile(cut.path);
			if (file) parts.push({ file: file.path, bytes: file.bytes, endsWithNewline: file.endsWithNewline });
			else if (cut?.elsewhere) {
				const named = `${text}\n${elsewhereNote(cut.elsewhere)}`;
				parts.push({ text: named, bytes: Buffer.byteLength(named, "utf8"), endsWithNewline: false });
			} else if (text.length > 0)
				parts.push({ text, bytes: Buffer.byteLength(text, "utf8"), endsWithNewline: text.endsWith("\n") });
		}
		return parts.map((part, i) => ({ ...part, newlineAfter: i < parts.length - 1 && !part.endsWithNewline }));
	}

	/** Size and last byte of a file the kernel wrote; a file gone is a failure (the whole text is lost). */
	private kernelFile(path: string): { path: string; bytes: number; endsWithNewline: boolean } | undefined {
		if (this.fileError) return undefined;
		try {
			const { size } = statSync(path);
			const last = Buffer.alloc(1);
			if (size > 0) {
				const fd = openSync(path, "r");
				try {
					readSync(fd, last, 0, 1, size - 1);
				} finally {
					closeSync(fd);
				}
			}
			return { path, bytes: size, endsWithNewline: size > 0 && last[0] === 0x0a };
		} catch (error) {
			this.fail(`Could not read the kernel's file ${path} (${reasonOf(error)})`);
			return undefined;
		}
	}

	private writeFullOutput(sections: Section[]): string | undefined {
		const finalPath = this.filePath(`${this.options.name}.out.txt`);
		if (!finalPath) return undefined;
		try {
			const partialPath = `${finalPath}.partial`;
			const fd = openSync(partialPath, "w", 0o600);
			try {
				for (const section of sections) {
					if (section.record) this.copyStream(section.record, fd);
					else if (section.file) copyFile(section.file, fd);
					else if (section.text) writeSync(fd, section.text);
					if (section.newlineAfter) writeSync(fd, "\n");
				}
			} finally {
				closeSync(fd);
			}
			renameSync(partialPath, finalPath);
		} catch (error) {
			unlinkQuietly(`${finalPath}.partial`);
			this.fail(`Could not write the complete-output file ${finalPath} (${reasonOf(error)})`);
			return undefined;
		} finally {
			this.removeFiles();
		}
		return finalPath;
	}

	/** `fileName` in the output folder, or `undefined` (and the failure recorded) when it cannot be made. */
	private filePath(fileName: string): string | undefined {
		try {
			return join(this.options.dir(), fileName);
		} catch (error) {
			this.fail(`Could not create the output folder (${reasonOf(error)})`);
			return undefined;
		}
	}

	/** Records the first file failure; the complete output is given up, the visible output kept. */
	private fail(description: string): void {
		if (this.fileError) return;
		this.fileError = `${description}; the visible output is kept, the complete output is not. ${remedy(description)}`;
		this.closeSpills();
		this.removeFiles();
		for (const record of [this.stdout, this.stderr]) record.chunks = [];
		this.memoryBytes = 0;
	}

	private closeSpills(): void {
		for (const record of [this.stdout, this.stderr]) {
			if (record.spillFd === undefined) continue;
			try {
				closeSync(record.spillFd);
			} catch {
				// Closing is best effort; the file is removed or reported anyway.
			}
			record.spillFd = undefined;
		}
	}

	/** Removes the spill files and the kernel's files of a cut result or error (copied or given up). */
	private removeFiles(): void {
		for (const record of [this.stdout, this.stderr]) if (record.spillPath) unlinkQuietly(record.spillPath);
		this.removeKernelFile(this.resultCut);
		this.removeKernelFile(this.errorCut);
	}

	private removeKernelFile(cut: CutText | undefined): void {
		if (cut?.path) unlinkQuietly(cut.path);
	}

	private copyStream(record: StreamRecord, fd: number): void {
		if (!record.spillPath) {
			for (const chunk of record.chunks) writeSync(fd, chunk);
			return;
		}
		copyFile(record.spillPath, fd);
	}

	private spill(record: StreamRecord, text: string): void {
		if (record.spillFd === undefined) {
			record.spillPath = this.filePath(`${this.options.name}.${record.name}.spill`);
			if (!record.spillPath) return;
		}
		try {
			record.spillFd ??= openSync(record.spillPath as string, "w", 0o600);
			writeSync(record.spillFd, text);
		} catch (error) {
			this.fail(`Could not write the spill file ${record.spillPath} (${reasonOf(error)})`);
		}
	}
}

/** One part of the complete output: a stream, a file the kernel wrote, or a text. */
interface Section {
	record?: StreamRecord;
	file?: string;
	text?: string;
	bytes: number;
	newlineAfter: boolean;
}

function copyFile(path: string, fd: number): void {
	const source = openSync(path, "r");
	const block = Buffer.allocUnsafe(COPY_BLOCK);
	try {
		for (let n = readSync(source, block); n > 0; n = readSync(source, block)) writeSync(fd, block, 0, n);
	} finally {
		closeSync(source);
	}
}

/** What to do about a file error, by its code. */
function remedy(description: string): string {
	if (/\b(ENOSPC|EDQUOT)\b/.test(description)) return "Free disk space; the next cell tries again.";
	if (/\b(EACCES|EPERM|EROFS)\b/.test(description)) {
		return "Make the folder writable, or start the kernel with another outputDir.";
	}
	return "Check that the folder's path can be created and written; the next cell tries again.";
}

function reasonOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

function unlinkQuietly(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// Already gone.
	}
}

/** Where the whole text of something a kernel on another machine cut is: its file there. */
export function elsewhereNote(path: string): string {
	return `[... the whole text is in ${path} on the kernel's machine ...]`;
}
