/** An earlier observation's lines, as candidates for unchanged sections. */
export interface EarlierText {
	id: string;
	lines: string[];
}

/** A part of the later text: novel lines shown as they are, or a run identical to an earlier observation. */
export type SectionPart =
	| { kind: "novel"; start: number; lines: string[] }
	| { kind: "same"; start: number; count: number; bytes: number; from: string; fromStart: number };

export interface SectionDelta {
	/** In order; `start` and `fromStart` are 1-based line numbers. */
	parts: SectionPart[];
	/** Bytes of novel lines (newlines included). */
	novelBytes: number;
	totalBytes: number;
}

export interface SectionDeltaOptions {
	/** An unchanged run must hold at least this many bytes to be replaced. Default 512. */
	minSectionBytes?: number;
}

const lineBytes = (text: string) => Buffer.byteLength(text) + 1;

/**
 * Composite output against earlier observations: runs of lines identical to a run of an earlier
 * observation, of at least `minSectionBytes`, become unchanged-section references; everything
 * else stays as novel lines. Earlier texts are tried in the order given. Exact line comparison
 * only, in linear time: a line that occurs exactly once in an earlier text anchors a match, which
 * is then extended line by line in both directions. Null when nothing qualifies.
 */
export function sectionDelta(
	after: string[],
	earlier: readonly EarlierText[],
	options: SectionDeltaOptions = {},
): SectionDelta | null {
	const minBytes = options.minSectionBytes ?? 512;
	const covered: ({ from: string; fromLine: number } | null)[] = after.map(() => null);
	for (const source of earlier) {
		// Where each line occurs in the earlier text: its index when exactly once, -1 when repeated.
		const position = new Map<string, number>();
		source.lines.forEach((line, index) => {
			position.set(line, position.has(line) ? -1 : index);
		});
		let i = 0;
		while (i < after.length) {
			const anchor = covered[i] === null ? position.get(after[i]) : undefined;
			if (anchor === undefined || anchor < 0) {
				i++;
				continue;
			}
			let start = i;
			let from = anchor;
			while (start > 0 && from > 0 && covered[start - 1] === null && after[start - 1] === source.lines[from - 1]) {
				start--;
				from--;
			}
			let end = i + 1;
			while (
				end < after.length &&
				from + (end - start) < source.lines.length &&
				covered[end] === null &&
				after[end] === source.lines[from + (end - start)]
			) {
				end++;
			}
			let bytes = 0;
			for (let k = start; k < end; k++) bytes += lineBytes(after[k]);
			if (bytes >= minBytes) {
				for (let k = start; k < end; k++) covered[k] = { from: source.id, fromLine: from + (k - start) };
			}
			i = end;
		}
	}
	if (covered.every((c) => c === null)) return null;

	const parts: SectionPart[] = [];
	let novelBytes = 0;
	let totalBytes = 0;
	for (let i = 0; i < after.length; i++) {
		const bytes = lineBytes(after[i]);
		totalBytes += bytes;
		const c = covered[i];
		const last = parts[parts.length - 1];
		if (c === null) {
			novelBytes += bytes;
			if (last?.kind === "novel") last.lines.push(after[i]);
			else parts.push({ kind: "novel", start: i + 1, lines: [after[i]] });
		} else if (last?.kind === "same" && last.from === c.from && last.fromStart + last.count === c.fromLine + 1) {
			last.count++;
			last.bytes += bytes;
		} else {
			parts.push({ kind: "same", start: i + 1, count: 1, bytes, from: c.from, fromStart: c.fromLine + 1 });
		}
	}
	return { parts, novelBytes, totalBytes };
}

/**
 * Bytes of `after` whose lines occur anywhere in the earlier texts: an upper bound, found in linear
 * time, on what any section delta could mark unchanged. Lets callers skip hopeless alignments.
 */
export function sharedLineBytes(after: readonly string[], earlier: readonly EarlierText[]): number {
	const known = new Set<string>();
	for (const source of earlier) for (const line of source.lines) known.add(line);
	let shared = 0;
	for (const line of after) if (known.has(line)) shared += lineBytes(line);
	return shared;
}

/** The delta as text lines: novel lines labelled `N: text`, unchanged runs as one marker line each. */
export function sectionDeltaText(delta: SectionDelta): string[] {
	const out: string[] = [];
	for (const p of delta.parts) {
		if (p.kind === "novel") {
			p.lines.forEach((text, i) => {
				out.push(`${p.start + i}: ${text}`);
			});
		} else {
			const end = p.start + p.count - 1;
			const fromEnd = p.fromStart + p.count - 1;
			out.push(
				`[lines ${p.start}-${end} unchanged: identical to ${p.from} lines ${p.fromStart}-${fromEnd} (${p.bytes} bytes)]`,
			);
		}
	}
	return out;
}
