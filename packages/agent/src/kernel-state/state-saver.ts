import { join } from "node:path";
import { type Kernel, type StateSaveReport, saveKernelState } from "prime-agent-kernel";
import type { StateSeal } from "./seal.js";

/** Where a session keeps its kernel state: `<artifact folder>/kernel-state/`. */
export function kernelStateDir(artifactDir: string): string {
	return join(artifactDir, "kernel-state");
}

/**
 * Names the runtime injects into every kernel (see `python/prime_agent_runtime/namespace.py`, and the
 * handles the specification adds). They are injected again after a restore, so they are never saved;
 * names an extension's start-up code defines are added by the session kernel.
 */
export const INJECTED_HANDLES: readonly string[] = [
	"edit",
	"asyncio",
	"rlm",
	"goal",
	"compact",
	"refine",
	"agent_message",
	"rlm_heartbeat",
];

export type StateSaveOutcome = { ok: true; report: StateSaveReport } | { ok: false; error: Error };

export interface StateSaverOptions {
	/** The snapshot folder. */
	dir: string;
	/** Names never saved, asked at each save (extensions may add some while the session starts). */
	exclude?: () => readonly string[];
	/** Quiet time after a successful cell before saving, so a burst of cells saves once. Default 1 s. */
	quietMs?: number;
	/** Seals each save as this agent home's; without it a snapshot is never restored (see `planStateRestore`). */
	seal?: StateSeal;
	/**
	 * The session entry of a cell (its id as `cellEnded` got it: the tool call's id), asked at save
	 * time: the save is kept for that entry too, so a branch from there restores it. Undefined when
	 * the entry is not recorded (the save then only replaces the latest).
	 */
	entryOf?: (cellId: string) => string | undefined;
	/** Told of every save, for diagnostics. A failed save never fails a cell. */
	onSaved?: (outcome: StateSaveOutcome) => void;
}

/**
 * Saves a kernel's namespace after each successful cell, debounced: the save runs as a silent
 * cell once the kernel has been quiet for `quietMs`, or, when the next cell comes sooner, just
 * before that cell. A cell that then runs for minutes (or never ends) cannot take the variables of
 * the cells before it with it; a cell waits at most for the previous cell's snapshot.
 */
export class StateSaver {
	private timer: NodeJS.Timeout | undefined;
	/** A successful cell ran since the last save started. */
	private dirty = false;
	private saving: Promise<void> | undefined;
	private target: Kernel | undefined;
	/** The last successful cell with an id, when no cell with an id failed after it. */
	private cellId: string | undefined;
	/** The last save that succeeded: what a restarted kernel can get back. */
	private saved: { dir: string; entry?: string } | undefined;

	constructor(private readonly options: StateSaverOptions) {}

	/** A cell is about to run: what earlier cells changed is saved first. Never throws. */
	async beforeCell(): Promise<void> {
		this.clearTimer();
		await this.saving;
		if (this.dirty) await this.save();
	}

	/** The snapshot the last successful save wrote (undefined before one). */
	get lastSaved(): { dir: string; entry?: string } | undefined {
		return this.saved;
	}

	/**
	 * A cell ended. Only a successful cell marks the namespace as worth saving. `cellId` names the
	 * cell for `entryOf`; a failed one clears it (its partial changes belong to no cell's snapshot).
	 */
	cellEnded(kernel: Kernel, succeeded: boolean, cellId?: string): void {
		if (cellId !== undefined) this.cellId = succeeded ? cellId : undefined;
		if (!succeeded) return;
		this.target = kernel;
		this.dirty = true;
		this.clearTimer();
		this.timer = setTimeout(() => void this.save(), this.options.quietMs ?? 1000);
		// A pending save never keeps the process alive; `flush()` saves at the end instead.
		this.timer.unref();
	}

	/** The kernel was replaced: whatever was unsaved in it is gone, and the next save describes the new one. */
	kernelReplaced(): void {
		this.clearTimer();
		this.dirty = false;
		this.target = undefined;
		this.cellId = undefined;
	}

	/** Save now if anything changed since the last save (session end). Never throws. */
	async flush(): Promise<void> {
		await this.beforeCell();
	}

	private async save(): Promise<void> {
		this.timer = undefined;
		if (this.saving) {
			// A change made during a save is saved right after it.
			await this.saving;
			return this.save();
		}
		const kernel = this.target;
		if (!kernel?.alive || !this.dirty) return;
		this.dirty = false;
		const { dir, seal } = this.options;
		const entry = this.cellId === undefined ? undefined : this.options.entryOf?.(this.cellId);
		this.saving = saveKernelState(kernel, dir, { exclude: this.options.exclude?.() ?? INJECTED_HANDLES, entry })
			.then((report) => {
				if (entry !== undefined) seal?.sign(dir, entry);
				seal?.sign(dir);
				this.saved = { dir, ...(entry !== undefined ? { entry } : {}) };
				return report;
			})
			.then(
				(report) => this.options.onSaved?.({ ok: true, report }),
				(error: Error) => this.options.onSaved?.({ ok: false, error }),
			)
			.finally(() => {
				this.saving = undefined;
			});
		return this.saving;
	}

	private clearTimer(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
	}
}
