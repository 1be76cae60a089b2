/** Texts of this many recent observations are held by a broker (each at most `BODY_MAX_BYTES`). */
export const CACHED_TEXTS = 4;

/**
 * The texts of a broker's last few text observations, by id. Deltas compare a new observation with
 * recent ones; without this, each comparison read, inflated and decoded every earlier body again
 * (about 5 ms per MB each, and up to four per observation). Archived observations never change, so
 * an entry never goes stale; memory stays within `CACHED_TEXTS` bodies.
 */
export class TextCache {
	private readonly texts = new Map<string, string>();

	get(id: string): string | undefined {
		return this.texts.get(id);
	}

	set(id: string, text: string): void {
		this.texts.delete(id);
		this.texts.set(id, text);
		while (this.texts.size > CACHED_TEXTS) {
			const oldest = this.texts.keys().next().value as string;
			this.texts.delete(oldest);
		}
	}
}
