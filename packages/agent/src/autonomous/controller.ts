import { join } from "node:path";
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, Usage } from "@mariozechner/pi-ai";
import type { HiddenMessage } from "../extensions/index.js";
import { type GoalController, type GoalEvent, tokensOf } from "../goals/index.js";
import type { RunSupervisor, StopVerdict, WouldStopEvent } from "../orchestrator/index.js";
import type { GateArchive, GateOutput } from "./archive.js";
import { workspaceFingerprint } from "./fingerprint.js";
import { GATE_TIMEOUT_MS, type GateRun, runGate } from "./gates.js";
import { type AutonomousConfig, minutesText } from "./limits.js";
import { cannotRunText, gateFailedText, gateNotRerunText, type LimitName } from "./report.js";

/** The hidden message a failing gate continues the run with. */
export const GATE_MESSAGE_TYPE = "autonomous_gate";

/** A gate's latest result, as reported to the modes and kept for the report. */
export interface GateResult {
	index: number;
	command: string;
	status: "passed" | "failed" | "not_rerun";
	exitCode: number | null;
	timedOut: boolean;
	/** It could not run its command (see `GateRun.cannotRun`): the run ended with a configuration error. */
	cannotRun?: true;
	/** Stopped while it ran because the run's time limit was reached. */
	stopped?: true;
	durationMs: number;
	observationId?: string;
}

export type AutonomousEvent =
	| { type: "autonomous_gate"; gate: GateResult; of: number }
	| { type: "autonomous_continue"; reason: "gate" | "goal"; continuation: number; of: number }
	| { type: "autonomous_end"; status: AutonomousEnd["status"]; limit?: LimitName };

/**
 * How the run ended, once it has: the gates passed, a limit stopped it, or gate `gate` (its index)
 * could not run its command (`detail`: how), a configuration error no continuation can fix.
 */
export type AutonomousEnd =
	| { status: "passed" }
	| { status: "limit"; limit: LimitName; detail: string }
	| { status: "gate_error"; gate: number; detail: string };

export interface AutonomousHost {
	cwd: string;
	/** The environment gates run with: the host's without its keys (see `childEnvironment`). */
	env: NodeJS.ProcessEnv;
	/** Where each gate run's complete output is written. */
	logDir: string;
	archive: GateArchive;
	goals: GoalController;
	childrenBusy(): boolean;
	/** Stop the run now (the time limit). */
	abortRun(): void;
}

interface Failure {
	fingerprint: string;
	output: GateOutput;
	run: GateRun;
}

/**
 * One autonomous run (`--autonomous -p`): when the model would stop, an open goal continues first,
 * then the quality gates run in order; the first failure continues the run with its output, until
 * every gate passes or a limit (continuations, turns, tokens, time) is reached. A gate that failed
 * is not rerun while the workspace fingerprint equals the one taken after that failure. A gate that
 * cannot run its command (not found, not executable) ends the run at once: the model cannot fix
 * the settings.
 */
export class AutonomousRun implements RunSupervisor {
	readonly startedAt = Date.now();
	turns = 0;
	tokens = 0;
	continuations = 0;
	private timeUp = false;
	private readonly timer: NodeJS.Timeout;
	private ended: AutonomousEnd | undefined;
	private readonly failures = new Map<number, Failure>();
	/** The latest result of each gate. */
	readonly gates: (GateResult | undefined)[];
	private goalStop: GoalEvent | undefined;
	private gateRuns = 0;
	/** The run was stopped (Ctrl-C, shutdown) while its gates ran: the model's turn itself ended well. */
	interrupted = false;
	private readonly listeners = new Set<(event: AutonomousEvent) => void>();

	constructor(
		readonly config: AutonomousConfig,
		private readonly host: AutonomousHost,
	) {
		this.gates = config.gates.map(() => undefined);
		this.timer = setTimeout(() => {
			this.timeUp = true;
			this.finish({ status: "limit", limit: "time", detail: minutesText(config.limits.timeMs) });
			host.abortRun();
		}, config.limits.timeMs);
		this.timer.unref();
		host.goals.onEvent((event) => {
			if (event.event === "budget_reached" || event.event === "stuck") this.goalStop = event;
		});
	}

	onEvent(listener: (event: AutonomousEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** How the run ended; undefined while it has not (or ended for another reason: an error, Ctrl-C). */
	get ending(): AutonomousEnd | undefined {
		if (this.ended) return this.ended;
		const limit = this.limitReached(false);
		if (limit) return limit;
		// The goal's budget ended the run after a turn's tools (the model never stopped).
		if (this.goalStop)
			return { status: "limit", limit: "goal", detail: this.goalStop.goal.reason ?? "the goal stopped" };
		return undefined;
	}

	get elapsedMs(): number {
		return Date.now() - this.startedAt;
	}

	/** Stop the clock (the run is over). */
	dispose(): void {
		clearTimeout(this.timer);
	}

	/** Count a loop event (subscribe it to the session). */
	observe(event: AgentEvent): void {
		if (event.type !== "message_end" || event.message.role !== "assistant") return;
		this.turns++;
		this.tokens += tokensOf((event.message as AssistantMessage).usage);
	}

	addChildUsage(usage: Usage): void {
		this.tokens += tokensOf(usage);
	}

	shouldEndRun(): boolean {
		return this.limitReached(false) !== undefined || this.host.goals.shouldEndRun();
	}

	async onWouldStop(event: WouldStopEvent): Promise<StopVerdict> {
		if (this.ended) return undefined;
		if (this.host.childrenBusy()) return { hold: true };
		const goal = this.host.goals.onWouldStop(event);
		if (goal) return "hold" in goal ? goal : this.continueWith(goal.continueWith, "goal");
		if (this.goalStop) {
			const reason = this.goalStop.goal.reason ?? "the goal stopped";
			this.finish({ status: "limit", limit: "goal", detail: reason });
			return undefined;
		}
		const failure = await this.runGates(event.signal);
		if (event.signal.aborted) {
			if (!this.ended) this.interrupted = true;
			return undefined;
		}
		// A gate that cannot run ended it.
		if (this.ended) return undefined;
		if (!failure) {
			this.finish({ status: "passed" });
			return undefined;
		}
		return this.continueWith(failure, "gate");
	}

	/** Continue with `message` unless a limit says no; a limit ends the run. */
	private continueWith(message: HiddenMessage, reason: "gate" | "goal"): StopVerdict {
		const limit = this.limitReached(true);
		if (limit) {
			this.finish(limit);
			return undefined;
		}
		this.continuations++;
		this.emit({
			type: "autonomous_continue",
			reason,
			continuation: this.continuations,
			of: this.config.limits.continuations,
		});
		return { continueWith: message };
	}

	/** The first limit reached; `continuing`: one more continuation is wanted. */
	private limitReached(continuing: boolean): AutonomousEnd | undefined {
		const { limits } = this.config;
		if (this.timeUp || this.elapsedMs >= limits.timeMs)
			return { status: "limit", limit: "time", detail: minutesText(limits.timeMs) };
		if (this.turns >= limits.turns)
			return { status: "limit", limit: "turns", detail: `${this.turns} of ${limits.turns}` };
		if (this.tokens >= limits.tokens)
			return { status: "limit", limit: "tokens", detail: `${this.tokens} of ${limits.tokens}` };
		if (continuing && this.continuations >= limits.continuations)
			return { status: "limit", limit: "continuations", detail: `${this.continuations} of ${limits.continuations}` };
		return undefined;
	}

	/** Run the gates in order; the message for the first that fails (or is not rerun), if any. */
	private async runGates(signal: AbortSignal): Promise<HiddenMessage | undefined> {
		const { gates } = this.config;
		let fingerprint: string | undefined;
		for (const [index, command] of gates.entries()) {
			const failed = this.failures.get(index);
			if (failed) {
				fingerprint ??= (await workspaceFingerprint(this.host.cwd)).digest;
				if (fingerprint === failed.fingerprint) {
					this.record(index, { status: "not_rerun", run: failed.run, output: failed.output });
					return gateMessage(gateNotRerunText(index, gates.length, failed.run, failed.output), index, "not_rerun");
				}
			}
			const run = await runGate(command, {
				cwd: this.host.cwd,
				env: this.host.env,
				logFile: join(this.host.logDir, `gate-${String(++this.gateRuns).padStart(3, "0")}-${index + 1}.log`),
				timeoutMs: GATE_TIMEOUT_MS,
				signal,
			});
			if (signal.aborted) {
				if (this.timeUp) this.record(index, { status: "failed", run, stopped: true });
				return undefined;
			}
			if (run.cannotRun) {
				this.record(index, { status: "failed", run });
				this.finish({ status: "gate_error", gate: index, detail: cannotRunText(run) });
				return undefined;
			}
			// A gate may change the workspace (caches, build output): take the state after it.
			fingerprint = undefined;
			if (run.passed) {
				this.failures.delete(index);
				this.record(index, { status: "passed", run });
				continue;
			}
			const output = await this.host.archive.output(run);
			const after = (await workspaceFingerprint(this.host.cwd)).digest;
			this.failures.set(index, { fingerprint: after, output, run });
			this.record(index, { status: "failed", run, output });
			const next = this.config.limits.continuations - this.continuations;
			return gateMessage(gateFailedText(index, gates.length, run, output, next), index, "failed");
		}
		return undefined;
	}

	private record(
		index: number,
		result: { status: GateResult["status"]; run: GateRun; output?: GateOutput; stopped?: true },
	): void {
		const gate: GateResult = {
			index,
			command: result.run.command,
			status: result.status,
			exitCode: result.run.exitCode,
			timedOut: result.run.timedOut,
			...(result.run.cannotRun ? { cannotRun: true as const } : {}),
			...(result.stopped ? { stopped: true as const } : {}),
			durationMs: result.status === "not_rerun" ? 0 : result.run.durationMs,
			...(result.output?.observationId ? { observationId: result.output.observationId } : {}),
		};
		this.gates[index] = gate;
		this.emit({ type: "autonomous_gate", gate, of: this.config.gates.length });
	}

	private finish(end: AutonomousEnd): void {
		if (this.ended) return;
		this.ended = end;
		clearTimeout(this.timer);
		this.emit({ type: "autonomous_end", status: end.status, ...(end.status === "limit" ? { limit: end.limit } : {}) });
	}

	private emit(event: AutonomousEvent): void {
		for (const listener of this.listeners) listener(event);
	}
}

function gateMessage(text: string, index: number, status: "failed" | "not_rerun"): HiddenMessage {
	return { customType: GATE_MESSAGE_TYPE, content: text, details: { gate: index, status } };
}
