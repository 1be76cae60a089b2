/**
 * Reader for mini-swe-agent trajectories (`.traj.json`, `.traj.json.gz`; `readTrajectory` in
 * `files.ts` reads these and our own session files):
 * `{instance_id, messages: [{role, content}], ...}` where `messages[0]` is the system prompt,
 * `messages[1]` the task, each assistant message holds one bash command in a fenced block and each
 * following user message is the observation (`<returncode>N</returncode>` then `<output>...</output>`).
 */

/** One replayed step: the assistant message (the action) and the observation that answered it. */
export interface TrajectoryStep {
	/** The assistant message as recorded (thought and command). */
	assistant: string;
	/** The bash command of the assistant message, or null when it held none or several. */
	command: string | null;
	/** The observation message exactly as recorded. */
	observation: string;
	/** `<returncode>` of the observation, or null when the message has none (e.g. a format notice). */
	exitCode: number | null;
	/** The tool reported an error; when absent, a non-zero exit code means an error. */
	isError?: boolean;
	/** Tool name; `bash` when absent. */
	tool?: string;
}

export interface Trajectory {
	id: string;
	system: string;
	task: string;
	/** Every observation in recorded order, each with the action that preceded it. */
	steps: TrajectoryStep[];
	/** Assistant messages after the last observation (none in a finished run, usually). */
	trailing: string[];
}

const FENCE = /```(?:bash|sh)?[^\n]*\n([\s\S]*?)```/g;
const RETURN_CODE = /^\s*<returncode>(-?\d+)<\/returncode>/;

/** Parses one trajectory file's JSON text. */
export function parseTrajectory(json: string, fallbackId: string): Trajectory {
	const data = JSON.parse(json) as { instance_id?: string; messages?: { role: string; content: unknown }[] };
	const messages = data.messages;
	if (!Array.isArray(messages) || messages.length < 2) {
		throw new Error(`Trajectory ${fallbackId} has no messages array with a system prompt and a task.`);
	}
	const text = (content: unknown): string =>
		typeof content === "string"
			? content
			: Array.isArray(content)
				? content.map((part) => (typeof part === "string" ? part : String(part?.text ?? ""))).join("")
				: String(content ?? "");
	const steps: TrajectoryStep[] = [];
	let pending: string | null = null;
	const trailing: string[] = [];
	for (const message of messages.slice(2)) {
		const body = text(message.content);
		if (message.role === "assistant") {
			if (pending !== null) trailing.push(pending);
			pending = body;
			continue;
		}
		if (message.role !== "user") continue;
		const assistant = pending ?? "";
		const commands = [...assistant.matchAll(FENCE)].map((match) => match[1].replace(/\n$/, ""));
		const code = RETURN_CODE.exec(body);
		steps.push({
			assistant,
			command: commands.length === 1 ? commands[0] : null,
			observation: body,
			exitCode: code ? Number(code[1]) : null,
		});
		pending = null;
	}
	if (pending !== null) trailing.push(pending);
	return {
		id: data.instance_id ?? fallbackId,
		system: text(messages[0].content),
		task: text(messages[1].content),
		steps,
		trailing,
	};
}
