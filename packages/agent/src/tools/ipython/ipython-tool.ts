import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type DisplayData, formatCellOutput } from "prime-agent-kernel";
import { type Static, Type } from "typebox";
import { IPYTHON_TOOL_NAME } from "../removed-tools.js";
import { normalizeCellCode } from "./cell-code.js";
import { LiveOutput } from "./live-output.js";
import type { CellRun, FileDiff, SessionKernel } from "./session-kernel.js";

export const ipythonParameters = Type.Object({
	code: Type.String({
		description:
			"Python scratchpad code run in the persistent IPython kernel, or a shell script in a cell whose first line is `%%bash`.",
	}),
});

export type IpythonParameters = Static<typeof ipythonParameters>;

/** Kept with every ipython result (never sent to the model; the content is). */
export interface IpythonDetails {
	status: "ok" | "error" | "aborted" | "died";
	/** True when the cell raised, was interrupted or lost its kernel. */
	isError: boolean;
	stdout: string;
	stderr: string;
	result?: string;
	errorName?: string;
	durationMs: number;
	executionCount?: number;
	/** Complete output when a stream was capped. */
	fullOutputPath?: string;
	/** Files changed by `edit()` in this cell. */
	diffs: FileDiff[];
	/** Files the cell changed in the working directory, however it wrote them. */
	writtenFiles: string[];
	/** The kernel was restarted before this cell; earlier variables were lost. */
	kernelReset?: boolean;
	/**
	 * The process running the session stopped during this cell (killed, crashed): this result was
	 * written when the session was picked up again, `stdout` being the output recorded until then.
	 */
	cutOff?: true;
}

const UPDATE_INTERVAL_MS = 250;

const DESCRIPTION = `Run a cell in your persistent IPython kernel (working directory: the project). State persists between calls. Bind file contents and search results to variables and print only what you need. A cell starting with \`%%bash\` runs as a one-shot shell script. \`await edit(path, old, new)\` replaces one exact occurrence of \`old\`. Each output stream is capped at 65,536 characters.`;

/** The single tool of the agent. Cells run one at a time. */
export function createIpythonTool(kernel: SessionKernel): AgentTool<typeof ipythonParameters, IpythonDetails> {
	return {
		name: IPYTHON_TOOL_NAME,
		label: "IPython",
		description: DESCRIPTION,
		parameters: ipythonParameters,
		executionMode: "sequential",
		async execute(toolCallId, params, signal, onUpdate) {
			const live = new LiveOutput();
			let lastUpdate = 0;
			// Output that comes within the interval goes out at its end, not only with the next chunk: a
			// cell that prints and then works quietly shows (and records) what it printed.
			let due: NodeJS.Timeout | undefined;
			const update = () => {
				due = undefined;
				lastUpdate = Date.now();
				const latest = live.text();
				onUpdate?.({ content: [{ type: "text", text: latest }], details: partialDetails(latest) });
			};
			try {
				const run = await kernel.run(
					normalizeCellCode(params.code),
					signal,
					(chunk) => {
						live.push(chunk.text);
						if (!onUpdate || due) return;
						const wait = lastUpdate + UPDATE_INTERVAL_MS - Date.now();
						if (wait <= 0) update();
						else due = setTimeout(update, wait);
					},
					toolCallId,
				);
				return { content: [{ type: "text", text: modelText(run) }], details: toDetails(run) };
			} finally {
				clearTimeout(due);
			}
		},
	};
}

/** What the model reads: the notice, the formatted output, and where the complete output lives. */
function modelText(run: CellRun): string {
	const { cell } = run;
	const parts: string[] = [];
	if (run.resetNotice) parts.push(run.resetNotice);
	const output = formatCellOutput({ stdout: cell.stdout, stderr: cell.stderr, result: cell.result, error: cell.error });
	if (output.trim() !== "") parts.push(output.replace(/\s+$/, ""));
	parts.push(...savedDisplayLines(cell.displays));
	if (cell.fullOutputPath) parts.push(`[complete output (${cell.fullOutputBytes} bytes): ${cell.fullOutputPath}]`);
	if (run.stillRunning) {
		parts.push("[the cell ignored the interrupt and is still running; the next cell starts when it ends]");
	} else if (run.kernelRestarted) {
		parts.push(
			"[the cell ignored the interrupt, so the kernel was killed: the next cell runs in a new kernel, which gets back the variables saved before this cell when there are some (its result says which)]",
		);
	} else if (cell.status === "aborted") parts.push("[cell interrupted; the kernel kept its state]");
	if (cell.status === "died")
		parts.push(
			"[the kernel process died; it restarts on the next call, with the variables saved before this cell when there are some (the next result says which)]",
		);
	if (parts.length === 0) parts.push("(no output)");
	return parts.join("\n");
}

/**
 * Displays are not shown to the model, but one the kernel found too large to show had parts saved
 * to files (an image as the image file): each is named, so nothing is dropped without a word.
 */
function savedDisplayLines(displays: DisplayData[]): string[] {
	return displays.flatMap((display) =>
		(display.saved ?? []).map((saved) =>
			saved.path
				? `[a display's ${saved.mimeType} (${saved.bytes} bytes) was too large to show; saved to ${saved.path}]`
				: `[a display's ${saved.mimeType} (${saved.chars} characters) was too large to show and could not be saved: ${saved.error}]`,
		),
	);
}

function toDetails(run: CellRun): IpythonDetails {
	const { cell } = run;
	return {
		status: cell.status,
		isError: cell.status !== "ok",
		stdout: cell.stdout,
		stderr: cell.stderr,
		result: cell.result,
		errorName: cell.error?.ename,
		durationMs: cell.durationMs,
		executionCount: cell.executionCount,
		fullOutputPath: cell.fullOutputPath,
		diffs: run.diffs,
		writtenFiles: run.writtenFiles,
		...(run.resetNotice ? { kernelReset: true } : {}),
	};
}

function partialDetails(streamed: string): IpythonDetails {
	return { status: "ok", isError: false, stdout: streamed, stderr: "", durationMs: 0, diffs: [], writtenFiles: [] };
}
