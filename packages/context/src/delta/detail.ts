import { EVIDENCE_KINDS } from "../capsule/index.js";
import { classifyLine, lastFrame, normalizeEvidence, stripAnsi } from "../outcome/index.js";
import { splitLines } from "./align.js";

/**
 * Whether a run's failure detail is unchanged since an earlier run of the same outcome: every line
 * from its first failure, exception, error or location line to its end, compared as shown (ANSI
 * removed, a `\r`-redrawn line's last frame) and with durations, clock times, addresses and temp paths
 * masked (`normalizeEvidence`). An outcome delta drops these lines, so they must be the earlier run's:
 * the lines that say why a test failed (`1 !== 2`, `expected: 2`, a deep-equal diff) are often none
 * of those kinds themselves. What comes before the first such line (headers, the platform, the
 * command's own wrapper text) may differ. Two runs with no such line at all agree.
 */
export function sameFailureDetail(before: string, after: string): boolean {
	const a = detailLines(before);
	const b = detailLines(after);
	if (a.length !== b.length) return false;
	for (let i = 0; i < a.length; i++) {
		if (a[i] !== b[i] && shown(a[i]) !== shown(b[i])) return false;
	}
	return true;
}

/** The lines from the first failure, exception, error or location line on. */
function detailLines(text: string): string[] {
	const lines = splitLines(text);
	const first = lines.findIndex((line) => EVIDENCE_KINDS.has(classifyLine(line)));
	return first < 0 ? [] : lines.slice(first);
}

function shown(line: string): string {
	return normalizeEvidence(lastFrame(stripAnsi(line)));
}
