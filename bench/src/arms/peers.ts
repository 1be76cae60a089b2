/**
 * Output handling of other agents, re-implemented as plain functions from their public
 * descriptions (see BENCHMARK.md). Each takes the text a tool printed and returns what that agent
 * shows its model. Markers are written in the shape the peer uses, so their size is counted too.
 */

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** The first `maxBytes` bytes of `text`, never splitting a character. */
function headBytes(text: string, maxBytes: number): string {
	const buffer = Buffer.from(text, "utf8");
	if (buffer.length <= maxBytes) return text;
	let end = maxBytes;
	while (end > 0 && (buffer[end] & 0xc0) === 0x80) end--;
	return buffer.subarray(0, end).toString("utf8");
}

/** The last `maxBytes` bytes of `text`, never splitting a character. */
function tailBytes(text: string, maxBytes: number): string {
	const buffer = Buffer.from(text, "utf8");
	if (buffer.length <= maxBytes) return text;
	let start = buffer.length - maxBytes;
	while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++;
	return buffer.subarray(start).toString("utf8");
}

/** `raw`: the output as is. */
export function raw(text: string): string {
	return text;
}

export const CODEX = { maxBytes: 10 * 1024, maxLines: 256, headLines: 128, tailLines: 128, headBytes: 5 * 1024 };

/**
 * Codex CLI (`format_exec_output` in codex-rs): output within 256 lines and 10 KiB is shown whole;
 * otherwise the first 128 lines (at most half the 10 KiB budget), an
 * `[... omitted N of M lines ...]` marker, and the last 128 lines within the remaining budget.
 */
export function codex(text: string): string {
	const lines = text.split("\n");
	if (lines.length <= CODEX.maxLines && byteLength(text) <= CODEX.maxBytes) return text;
	const head = headBytes(lines.slice(0, CODEX.headLines).join("\n"), CODEX.headBytes);
	const tailStart = Math.max(CODEX.headLines, lines.length - CODEX.tailLines);
	const omitted = tailStart - CODEX.headLines;
	const marker = `\n[... omitted ${omitted} of ${lines.length} lines ...]\n\n`;
	const tailBudget = Math.max(0, CODEX.maxBytes - byteLength(head) - byteLength(marker));
	const tail = tailBytes(lines.slice(tailStart).join("\n"), tailBudget);
	return head + marker + tail;
}

export const CLAUDE_CODE = { thresholdChars: 30_000, previewChars: 2_000 };

/**
 * Claude Code (Bash tool): output over 30,000 characters is saved to a file and the model sees a
 * notice with the file path and a 2,000-character preview of the start.
 */
export function claudeCode(text: string): string {
	if (text.length <= CLAUDE_CODE.thresholdChars) return text;
	const size = `${(byteLength(text) / 1024).toFixed(1)}KB`;
	return (
		`<persisted-output>\nOutput too large (${size}). Full output saved to: tool-results/output.txt\n\n` +
		`Preview (first 2KB):\n${text.slice(0, CLAUDE_CODE.previewChars)}\n...\n</persisted-output>`
	);
}

export const PI = { maxLines: 2_000, maxBytes: 50 * 1024 };

/**
 * pi (coding agent `bash` tool, `truncateTail`): the last 2,000 lines or 50 KB, whichever limit is
 * reached first, whole lines only (a single last line over the limit keeps its tail), followed by a
 * `[Showing lines X-Y of Z. Full output: path]` notice.
 */
export function pi(text: string): string {
	const lines = text.split("\n");
	if (lines.length <= PI.maxLines && byteLength(text) <= PI.maxBytes) return text;
	const kept: string[] = [];
	let bytes = 0;
	for (let index = lines.length - 1; index >= 0 && kept.length < PI.maxLines; index--) {
		const size = byteLength(lines[index]) + (kept.length > 0 ? 1 : 0);
		if (bytes + size > PI.maxBytes) {
			if (kept.length === 0) kept.push(tailBytes(lines[index], PI.maxBytes));
			break;
		}
		kept.unshift(lines[index]);
		bytes += size;
	}
	const start = lines.length - kept.length + 1;
	return `${kept.join("\n")}\n\n[Showing lines ${start}-${lines.length} of ${lines.length}. Full output: /tmp/pi-bash-output.log]`;
}

export const RLM = { maxChars: 20_000 };

/** RLM reference REPL: printed output past 20,000 characters is cut to the first 20,000. */
export function rlm(text: string): string {
	if (text.length <= RLM.maxChars) return text;
	return `${text.slice(0, RLM.maxChars)}... + [${text.length - RLM.maxChars} chars...]`;
}

export const CONTEXT_MODE = { maxBytes: 102_400, headShare: 0.6 };

/**
 * context-mode (sandbox executor `smartTruncate`, 100 KB output budget): whole lines from the start
 * within 60% of the budget and from the end within the other 40%, joined by a marker naming the
 * lines and kilobytes left out.
 */
export function contextMode(text: string): string {
	if (byteLength(text) <= CONTEXT_MODE.maxBytes) return text;
	const lines = text.split("\n");
	const headBudget = Math.floor(CONTEXT_MODE.maxBytes * CONTEXT_MODE.headShare);
	const tailBudget = CONTEXT_MODE.maxBytes - headBudget;
	const head: string[] = [];
	let used = 0;
	for (const line of lines) {
		const size = byteLength(line) + 1;
		if (used + size > headBudget) break;
		head.push(line);
		used += size;
	}
	const tail: string[] = [];
	used = 0;
	for (let index = lines.length - 1; index >= head.length; index--) {
		const size = byteLength(lines[index]) + 1;
		if (used + size > tailBudget) break;
		tail.unshift(lines[index]);
		used += size;
	}
	const skipped = lines.length - head.length - tail.length;
	const skippedBytes = byteLength(text) - byteLength(head.join("\n")) - byteLength(tail.join("\n"));
	const marker = `\n\n... [${skipped} lines / ${(skippedBytes / 1024).toFixed(1)}KB truncated — showing first ${head.length} + last ${tail.length} lines] ...\n\n`;
	return head.join("\n") + marker + tail.join("\n");
}

export const MASKING = { keepLast: 5, blockEvery: 10 };

/**
 * SWE-agent / OpenHands style observation masking (SWE-agent's `last_n_observations` history
 * processor): every observation older than the last 5 is replaced by a one-line stub.
 */
export function maskedStub(text: string): string {
	return `Old environment output: (${text.split("\n").length} lines omitted)`;
}

/** A peer arm: a plain function of one observation's text. */
export interface PeerArm {
	name: string;
	view: (text: string) => string;
}

/** The per-observation peer arms, in report order. */
export const PEER_ARMS: PeerArm[] = [
	{ name: "raw", view: raw },
	{ name: "codex", view: codex },
	{ name: "claude-code", view: claudeCode },
	{ name: "pi", view: pi },
	{ name: "rlm", view: rlm },
	{ name: "context-mode", view: contextMode },
];
