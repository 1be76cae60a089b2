/**
 * What the user types while `prime-agent` starts, before the terminal UI reads keys (a user who
 * launches and types at once, as in any shell). Until `hold` the terminal itself keeps the keys
 * (in its line buffer, echoed); from `hold` this process reads them: the terminal is in raw mode
 * (no echo over the coming first frame, keys as the UI will read them) and every key is kept
 * until the UI takes them with `take`.
 *
 * Ctrl-C while held is the interrupt it would have been without the hold: the process gets
 * SIGINT, as a program still starting does.
 */
export class TypeAhead {
	private held = "";
	private taken = false;
	private wasRaw: boolean | undefined;
	private readonly onData = (chunk: Buffer | string) => {
		const text = String(chunk);
		if (text.includes("\x03")) {
			this.stop();
			process.kill(process.pid, "SIGINT");
			return;
		}
		this.held += text;
	};

	constructor(private readonly stdin: NodeJS.ReadStream) {}

	/** Read and keep keys (again, after `stop`); does nothing once the keys were taken or while holding. */
	hold(): void {
		if (this.taken || this.wasRaw !== undefined) return;
		this.wasRaw = this.stdin.isRaw;
		this.stdin.setRawMode?.(true);
		this.stdin.setEncoding("utf8");
		this.stdin.on("data", this.onData);
		this.stdin.resume();
	}

	/**
	 * Stop reading (another reader, the project review, has the terminal meanwhile): stdin paused,
	 * the terminal's mode as it was. What was held stays held.
	 */
	stop(): void {
		if (this.wasRaw === undefined) return;
		this.stdin.off("data", this.onData);
		this.stdin.pause();
		this.stdin.setRawMode?.(this.wasRaw);
		this.wasRaw = undefined;
	}

	/**
	 * The keys typed so far, as the terminal sent them (Enter is `\r`), and stop holding for good:
	 * stdin is left paused for the UI, which reads it from now on. Call it right before the UI
	 * starts reading, in the same tick, so no key falls between the two. Later calls return "".
	 */
	take(): string {
		this.stop();
		this.taken = true;
		const keys = this.held;
		this.held = "";
		return keys;
	}
}
