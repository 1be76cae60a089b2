import { basename, dirname } from "node:path";
import type { SavedRepresentation } from "../types.js";

/**
 * What the kernel cut from a message before sending it (see `python/prime_kernel/output_caps.py`):
 * an error or a result over the visible cap arrives already cut, with its whole text in a file the
 * kernel wrote to the output folder; a display arrives with its large representations saved to
 * files. The key is in the message's content.
 */
export const KERNEL_CUT_KEY = "prime_cut";

/**
 * The whole text of an error or result the kernel cut: its file, or why there is none, or (a
 * kernel on another machine) its file there, which the host cannot read.
 */
export type CutText =
	| { path: string; error?: undefined; elsewhere?: undefined }
	| { path?: undefined; error: string; elsewhere?: undefined }
	| { path?: undefined; error?: undefined; elsewhere: string };

/** Only files the kernel names so are read (and removed) by the host: the content is the model's to forge. */
const KERNEL_TEXT_FILE = /^kernel-[0-9a-f]{8}\.(?:error|result)\.txt$/;

/**
 * The cut text named by `content`, or `undefined` when nothing was cut. A path outside `dir` or
 * not named as the kernel names its files is reported as an error, never read. A kernel on another
 * machine saves to its own folder there (`kernelDir`): a file of it is named, not read.
 */
export function cutTextOf(
	content: Record<string, unknown>,
	dir: () => string,
	kernelDir?: string,
): CutText | undefined {
	const cut = content[KERNEL_CUT_KEY] as { path?: unknown; error?: unknown } | undefined;
	if (!cut || typeof cut !== "object") return undefined;
	if (typeof cut.error === "string") return { error: cut.error };
	if (typeof cut.path !== "string") return undefined;
	if (KERNEL_TEXT_FILE.test(basename(cut.path)) && kernelDir && dirname(cut.path) === kernelDir) {
		return { elsewhere: cut.path };
	}
	if (KERNEL_TEXT_FILE.test(basename(cut.path)) && dirname(cut.path) === outputFolder(dir)) return { path: cut.path };
	return { error: `the kernel named a file outside the output folder (${cut.path})` };
}

/** The representations of a display the kernel saved to files (absent when it cut nothing). */
export function savedOf(content: Record<string, unknown>): SavedRepresentation[] | undefined {
	const cut = content[KERNEL_CUT_KEY] as { saved?: unknown } | undefined;
	if (!cut || typeof cut !== "object" || !Array.isArray(cut.saved)) return undefined;
	return cut.saved.flatMap((entry: Record<string, unknown>) => {
		if (!entry || typeof entry.mime !== "string") return [];
		const saved: SavedRepresentation = { mimeType: entry.mime, chars: Number(entry.chars) || 0 };
		if (typeof entry.path === "string") saved.path = entry.path;
		if (typeof entry.bytes === "number") saved.bytes = entry.bytes;
		if (typeof entry.error === "string") saved.error = entry.error;
		return [saved];
	});
}

function outputFolder(dir: () => string): string | undefined {
	try {
		return dir();
	} catch {
		return undefined;
	}
}
