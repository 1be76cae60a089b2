import { join } from "node:path";
import { type Kernel, type StateSaveReport, saveKernelState } from "prime-agent-kernel";

/** Where a session keeps its kernel state: `<artifact folder>/kernel-state/`. */
export function kernelStateDir(artifactDir: string): string {
	return join(artifactDir, "kernel-state");
}

/**
 * Names the runtime injects into every kernel (see `python/prime_agent_runtime/namespace.py`, and the
 * handles the specification adds). They are injected again after a restore, so they are never saved.
 */
export const INJECTED_HANDLES: readonly string[] = [
	"edit",
	"asyncio",
	"rlm",
	"goal",
	"compact",
	"refine",
	"agent_message",
	"prime_context",
];

export type StateSaveOutcome = { ok: true; report: StateSaveReport } | { ok: false; error: Error };

export interface StateSaverOptions {
	/** The snapshot folder. */
	dir: string;
	/** Quiet time after a successful cell before saving, so a burst of cells saves once. Default 1 s. */
	quietMs?: number;
	/** Longest a change may wait while cells keep coming. Default 10 s. */
	maxDelayMs?: number;
	/** Told of every save, for diagnostics. A failed save never fails a cell. */
	onSaved?: (outcome: StateSaveOutcome) => void;
}

/**
 * Saves a kernel's namespace after successful cells, debounced and off the cell's path: the save
 * runs as a silent cell once the kernel has been quiet for `quietMs`, so a cell never waits for
 * its own snapshot (a cell sent during a save waits for that save, which is usually a few ms).
 */
export class StateSaver {
	private timer: NodeJS.Timeout | undefined;
	private dirtySince: number | undefined;
	private saving: Promise<void> | undefined;
	private target: Kernel | undefined;

	constructor(private readonly options: StateSaverOptions) {}

	/** A cell is about to run: no save may start before it ends. */
	cellStarting(): void {
		this.clearTimer();
	}

	/** A cell ended. Only a successful cell marks the namespace as worth saving. */
	cellEnded(kernel: Kernel, succeeded: boolean): void {
		if (succeeded) {
			this.target = kernel;
			this.dirtySince ??= Date.now();
		}
		if (this.dirtySince === undefined) return;
		const waited = Date.now() - this.dirtySince;
		const delay = Math.max(0, Math.min(this.options.quietMs ?? 1000, (this.options.maxDelayMs ?? 10_000) - waited));
		this.clearTimer();
		this.timer = setTimeout(() => void this.save(), delay);
		// A pending save never keeps the process alive; `flush()` saves at the end instead.
		this.timer.unref();
	}

	/** The kernel was replaced: whatever was unsaved in it is gone, and the next save describes the new one. */
	kernelReplaced(): void {
		this.clearTimer();
		this.dirtySince = undefined;
		this.target = undefined;
	}

	/** Save now if anything changed since the last save (session end). Never throws. */
	async flush(): Promise<void> {
		this.clearTimer();
		await this.saving;
		if (this.dirtySince !== undefined) await this.save();
	}

	private async save(): Promise<void> {
		this.timer = undefined;
		if (this.saving) {
			// A change made during a save is saved right after it.
			await this.saving;
			return this.save();
		}
		const kernel = this.target;
		if (!kernel?.alive || this.dirtySince === undefined) return;
		this.dirtySince = undefined;
		this.saving = saveKernelState(kernel, this.options.dir, { exclude: INJECTED_HANDLES })
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
