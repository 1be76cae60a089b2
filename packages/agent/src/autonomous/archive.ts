import { readFile } from "node:fs/promises";
import { type ContextSession, openContextSession } from "prime-agent-context";
import { boundOutput, GATE_OUTPUT_LIMIT, type GateRun } from "./gates.js";

/** What the model sees of a gate's output, and the observation holding all of it. */
export interface GateOutput {
	/** At most `GATE_OUTPUT_LIMIT` characters. */
	text: string;
	/** The Prime Context observation holding the whole output, when it was archived. */
	observationId?: string;
}

/**
 * Archives gate output whole in the session's Prime Context archive (the library, as the
 * `prime-context` command line uses it) and gives back what the model sees: Prime Context's
 * capsule or the output itself, bounded to 6,000 characters. When the archive cannot be written the
 * model gets the bounded output and the path of the log file instead.
 */
export class GateArchive {
	private opened: Promise<ContextSession> | undefined;

	constructor(private readonly options: { sessionId: string; cwd: string; env: NodeJS.ProcessEnv }) {}

	async output(run: GateRun): Promise<GateOutput> {
		try {
			this.opened ??= openContextSession(this.options);
			const context = await this.opened;
			const result = await context.observe({
				tool: "gate",
				text: run.tail,
				fullOutputPath: run.logFile,
				isError: !run.passed,
				exitCode: run.exitCode,
				command: run.command,
			});
			if (result.archived) {
				const where = `the whole output is Prime Context observation ${result.id} (prime_context read or search it)`;
				return { text: boundOutput(result.text, GATE_OUTPUT_LIMIT, where), observationId: result.id };
			}
		} catch {
			// Fall through: the log file still holds everything.
		}
		const whole = await readFile(run.logFile, "utf8").catch(() => run.tail);
		return { text: boundOutput(whole, GATE_OUTPUT_LIMIT, `the whole output is in ${run.logFile}`) };
	}
}
