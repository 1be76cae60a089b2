import { HARNESS_LIMITS } from "./types.js";

export interface AutoRefineOptions {
	/** Root sessions only: a sub-agent never refines on its own. */
	enabled: boolean;
	now: () => number;
	/** When the last refinement ran (from the log), so the cooldown holds across a resume. */
	lastRefinementAt?: number;
	everyTurns?: number;
	cooldownMs?: number;
}

/**
 * When the automatic refinement runs: every 25 assistant turns and after each compaction, but not
 * within 20 minutes of the last refinement (automatic or asked for). A check that falls inside the
 * cooldown is skipped, not postponed: the turn count starts again.
 */
export class AutoRefineSchedule {
	private turns = 0;
	private lastAt: number | undefined;
	private readonly everyTurns: number;
	private readonly cooldownMs: number;

	constructor(private readonly options: AutoRefineOptions) {
		this.lastAt = options.lastRefinementAt;
		this.everyTurns = options.everyTurns ?? HARNESS_LIMITS.autoEveryTurns;
		this.cooldownMs = options.cooldownMs ?? HARNESS_LIMITS.autoCooldownMs;
	}

	/** An assistant turn ended: true when a refinement is due now. */
	turnEnded(): boolean {
		if (!this.options.enabled) return false;
		this.turns++;
		if (this.turns < this.everyTurns) return false;
		this.turns = 0;
		return this.take();
	}

	/** A compaction happened: true when a refinement is due now. */
	compacted(): boolean {
		return this.options.enabled && this.take();
	}

	/** A refinement ran (any trigger): the cooldown starts again. */
	refined(): void {
		this.lastAt = this.options.now();
	}

	/** Milliseconds of cooldown left (0 when none). */
	cooldownLeft(): number {
		if (this.lastAt === undefined) return 0;
		return Math.max(0, this.lastAt + this.cooldownMs - this.options.now());
	}

	private take(): boolean {
		if (this.cooldownLeft() > 0) return false;
		this.lastAt = this.options.now();
		return true;
	}
}
