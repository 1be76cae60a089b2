import type { ContextSession, RecoveryResponse } from "prime-agent-context";

export const PC_USAGE = `Usage:
/pc status
/pc list [limit]
/pc read <observation-id> [start:end]
/pc search <observation-id|all> <fixed text>
/pc focus <text> | /pc focus clear
/pc add <text>
/pc done <item-id>
/pc pin <observation-id>
/pc unpin <observation-id>
/pc mode on|off
/pc cleanup current
/pc doctor`;

/** What `/pc` works on: the session's Prime Context and the session-local mode. */
export interface PcTarget {
	context(): Promise<ContextSession>;
	/** A recovery call with the human budget and `/pc` spelling. */
	recover(args: Record<string, unknown>): Promise<RecoveryResponse>;
	readonly active: boolean;
	setMode(on: boolean): void;
	/** One line on ageing in this session: on or off, what is aged and what it saves. */
	ageing(): Promise<string>;
	/** Write the session file now (see `ExtensionAPI.keepSession`): the task store is kept under its id. */
	keep(): void;
}

/** Runs one `/pc` command; returns what to show. Bad input throws with the usage. */
export async function runPcCommand(line: string, target: PcTarget): Promise<string> {
	const [name = "", ...rest] = line.trim().split(/\s+/);
	const text = line.trim().slice(name.length).trim();
	const answer = async (args: Record<string, unknown>) => {
		const response = await target.recover(args);
		// The command's failure line already says it failed; drop the response's own "Error: " prefix.
		if (response.isError) throw new Error(response.text.replace(/^Error: /, ""));
		return response.text;
	};
	// The user changed the task (kept in the archive under the session's id): the session is kept
	// too, so `-c` finds the task again even when no answer came in this session yet.
	const change = async (args: Record<string, unknown>) => {
		const text = await answer(args);
		target.keep();
		return text;
	};
	switch (name) {
		case "status": {
			// The status's own mode line reflects the config; the session's `/pc mode` wins here.
			const mode = `mode: ${target.active ? "on" : "off"} (this session)`;
			const status = await answer({ action: "status" });
			const ageing = await target.ageing();
			return `${/^mode: .*$/m.test(status) ? status.replace(/^mode: .*$/m, mode) : `${mode}\n${status}`}\n${ageing}`;
		}
		case "list":
			return answer({ action: "list", ...(rest[0] ? { limit: integer(rest[0], "limit") } : {}) });
		case "read": {
			const [id, range] = rest;
			if (!id) throw usage("/pc read needs an observation id");
			return answer({ action: "read", id, ...lineRange(range) });
		}
		case "search": {
			const [where] = rest;
			const query = text.slice((where ?? "").length).trim();
			if (!where || !query) throw usage("/pc search needs an observation id (or all) and the text to find");
			return answer({ action: "search", query, ...(where === "all" ? {} : { id: where }) });
		}
		case "focus":
			if (!text) throw usage("/pc focus needs the focus text, or `clear`");
			return change({ action: "update", focus: text === "clear" ? null : text });
		case "add":
			if (!text) throw usage("/pc add needs the item's text");
			return change({ action: "update", add: [text] });
		case "done":
			if (!rest[0]) throw usage("/pc done needs an item id such as item_1");
			return change({ action: "update", complete: [rest[0]] });
		case "pin":
		case "unpin":
			if (!rest[0]) throw usage(`/pc ${name} needs an observation id`);
			return change({ action: "update", [name]: [rest[0]] });
		case "mode": {
			if (rest[0] !== "on" && rest[0] !== "off") throw usage("/pc mode takes on or off");
			target.setMode(rest[0] === "on");
			return rest[0] === "on"
				? "Prime Context is on for this session: new tool results go through the broker."
				: "Prime Context is off for this session: new tool results are shown as they are (commands still work).";
		}
		case "cleanup": {
			if (rest[0] !== "current") throw usage("/pc cleanup takes `current` (only this session's archive is removed)");
			const removed = await (await target.context()).cleanup();
			const count = `${removed.observations} observation${removed.observations === 1 ? "" : "s"}`;
			return `Removed ${count} (${removed.bytes} bytes) from ${removed.dir}; pins cleared.`;
		}
		case "doctor":
			return (await (await target.context()).doctor()).lines.join("\n");
		case "":
		case "help":
			return PC_USAGE;
		default:
			throw usage(`unknown /pc command "${name}"`);
	}
}

/** `200:279`, `200:` or `200` (one line) as read arguments; none: from the start. */
function lineRange(range: string | undefined): { startLine?: number; endLine?: number } {
	if (!range) return {};
	const match = /^(\d+)(:(\d*))?$/.exec(range);
	if (!match) throw usage(`"${range}" is not a line range; write start:end, start: or one line number`);
	const startLine = Number(match[1]);
	if (match[2] === undefined) return { startLine, endLine: startLine };
	return match[3] ? { startLine, endLine: Number(match[3]) } : { startLine };
}

function integer(text: string, what: string): number {
	if (!/^\d+$/.test(text)) throw usage(`${what} must be a whole number, not "${text}"`);
	return Number(text);
}

function usage(problem: string): Error {
	return new Error(`${problem}.\n${PC_USAGE}`);
}
