/**
 * The listeners of one kind of event. `emit` calls each listener added before it began, in the
 * order added (one added during an `emit` hears the next event; one removed during it may still
 * hear this one). A listener must not throw: what it throws ends the `emit` and reaches its caller.
 */
export class Emitter<T = void> {
	private readonly listeners = new Set<(value: T) => void>();

	/** Listen until the returned function is called (calling it again does nothing). */
	on(listener: (value: T) => void): () => void {
		this.listeners.add(listener);
		return () => {
			this.listeners.delete(listener);
		};
	}

	emit(value: T): void {
		for (const listener of [...this.listeners]) listener(value);
	}
}
