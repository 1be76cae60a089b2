/** What the planning answer held: edits, or why it could not be read. */
export type ParsedPlan =
	| { ok: true; edits: Record<string, unknown>[] }
	| { ok: false; truncated: boolean; message: string };

/**
 * Read the planning call's answer: a JSON list of edit objects (a code fence or text around it is
 * tolerated, and `{"edits": [...]}` too). A list that ends unfinished (open brackets or string at
 * the end, or the model stopped at its token limit) is reported as truncated, never half-applied.
 */
export function parsePlan(answer: string, stoppedAtLimit: boolean): ParsedPlan {
	const text = answer
		.replace(/^\s*```[a-zA-Z]*\s*\n?/, "")
		.replace(/\n?```\s*$/, "")
		.trim();
	if (text === "") {
		if (stoppedAtLimit) return truncated(0);
		return { ok: true, edits: [] };
	}
	const start = firstOf(text, ["[", "{"]);
	if (start < 0) return unreadable(`The plan was not JSON: ${quote(text)}`);
	// The first list or object, up to its own closing bracket (prose after it may hold brackets too).
	const end = closingIndex(text, start);
	if (end < 0) return truncated(text.length);
	let value: unknown;
	try {
		value = JSON.parse(text.slice(start, end + 1));
	} catch (error) {
		return unreadable(`The plan is not valid JSON (${(error as Error).message})`);
	}
	const list = Array.isArray(value) ? value : (value as { edits?: unknown })?.edits;
	if (!Array.isArray(list)) return unreadable("The plan is JSON but not a list of edits");
	return {
		ok: true,
		edits: list.map((edit) => (typeof edit === "object" && edit !== null ? edit : { invalid: edit })) as Record<
			string,
			unknown
		>[],
	};
}

function truncated(chars: number): ParsedPlan {
	return {
		ok: false,
		truncated: true,
		message: `The plan's JSON is truncated (it ends unfinished after ${chars} characters); nothing was applied. Retry, with narrower instructions if the plan is long.`,
	};
}

function unreadable(what: string): ParsedPlan {
	return {
		ok: false,
		truncated: false,
		message: `${what}; nothing was applied. Retry /refine (the answer must be a JSON list of edits).`,
	};
}

function firstOf(text: string, chars: string[]): number {
	const found = chars.map((char) => text.indexOf(char)).filter((index) => index >= 0);
	return found.length ? Math.min(...found) : -1;
}

/** Index of the bracket closing the one at `start` (strings skipped), or -1 when it never closes. */
function closingIndex(text: string, start: number): number {
	let depth = 0;
	let inString = false;
	let escaped = false;
	for (let index = start; index < text.length; index++) {
		const char = text[index];
		if (inString) {
			if (escaped) escaped = false;
			else if (char === "\\") escaped = true;
			else if (char === '"') inString = false;
		} else if (char === '"') inString = true;
		else if (char === "[" || char === "{") depth++;
		else if ((char === "]" || char === "}") && --depth === 0) return index;
	}
	return -1;
}

function quote(text: string): string {
	return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}
