/**
 * A program on a real pseudo-terminal, for timing what a user sees. Python's `pty` module holds
 * the terminal (Node has none without a native package); it frames every chunk the program writes
 * with the milliseconds since it started the program, so the times are the terminal's own, not
 * when this process got round to reading them.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";

const DRIVER = `
import os, pty, select, signal, sys, time, fcntl, termios, struct
cols, rows = int(sys.argv[1]), int(sys.argv[2])
argv = sys.argv[3:]
start = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    os.execv(argv[0], argv)
out = sys.stdout.buffer
stdin = sys.stdin.buffer.fileno()
reading = [fd, stdin]
while True:
    ready, _, _ = select.select(reading, [], [])
    if stdin in ready:
        data = os.read(stdin, 65536)
        if data:
            os.write(fd, data)
            out.write(b"%.3f 0 i\\n" % ((time.monotonic() - start) * 1000))
            out.flush()
        else:
            # The benchmark went away: the program's terminal closes, as a closed window's would.
            reading.remove(stdin)
            os.kill(pid, signal.SIGHUP)
    if fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            break
        out.write(b"%.3f %d o\\n" % ((time.monotonic() - start) * 1000, len(data)) + data)
        out.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

/** A marker shown: the milliseconds from the program's start to the chunk that completed it, and the text matched. */
export interface Shown {
	at: number;
	text: string;
	/** The plain-text offset just after it (a later `waitFor` may look from there). */
	end: number;
}

/** What the terminal has shown, as plain text (escape sequences removed), with when each part came. */
export class TerminalRun {
	private readonly child: ChildProcessWithoutNullStreams;
	private pending = Buffer.alloc(0);
	private readonly decoder = new StringDecoder("utf8");
	/** The start of an escape sequence cut at a chunk's end: its rest comes with the next chunk. */
	private cut = "";
	/** The plain text shown so far, and for each chunk the offset it starts at and its time. */
	private text = "";
	private readonly chunks: { at: number; offset: number }[] = [];
	private waiters: (() => void)[] = [];
	/** Who waits for the terminal to take typed keys, in typing order. */
	private readonly typed: ((at: number) => void)[] = [];
	readonly exited: Promise<number | null>;

	/** Run `argv` (an executable and its arguments) on a `cols` x `rows` terminal, in `cwd` with exactly `env`. */
	constructor(
		python: string,
		argv: string[],
		options: { cwd: string; env: NodeJS.ProcessEnv; cols?: number; rows?: number },
	) {
		this.child = spawn(python, ["-c", DRIVER, String(options.cols ?? 100), String(options.rows ?? 30), ...argv], {
			cwd: options.cwd,
			env: { ...options.env, TERM: "xterm-256color" },
		});
		this.child.stdout.on("data", (data: Buffer) => this.read(data));
		let errors = "";
		this.child.stderr.on("data", (data: Buffer) => {
			errors += data.toString();
		});
		this.exited = new Promise((resolve) =>
			this.child.on("exit", (code) => {
				if (code !== 0 && errors) process.stderr.write(errors);
				this.wake();
				resolve(code);
			}),
		);
	}

	/** Type `text` (keys as bytes: "\r" is Enter, "\x04" Ctrl-D); resolves with when the terminal got it. */
	type(text: string): Promise<number> {
		const typed = new Promise<number>((resolve) => this.typed.push(resolve));
		this.child.stdin.write(text);
		return typed;
	}

	/**
	 * The milliseconds from the program's start to the chunk that completed the first showing of
	 * `marker` after plain-text offset `from`; throws with the text shown when it does not come.
	 */
	async waitFor(marker: string | RegExp, from = 0, timeoutMs = 120_000): Promise<Shown> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const found = this.find(marker, from);
			if (found) return found;
			if (this.child.exitCode !== null || Date.now() > deadline)
				throw new Error(
					`The terminal never showed ${String(marker)}${this.child.exitCode !== null ? ` (the program exited with ${this.child.exitCode})` : ""}. It showed:\n${this.text.slice(-3000)}`,
				);
			await new Promise<void>((resolve) => {
				const timer = setTimeout(resolve, 1000);
				this.waiters.push(() => {
					clearTimeout(timer);
					resolve();
				});
			});
		}
	}

	/** The plain-text offset of everything shown so far (a later `waitFor` looks only after it). */
	get shown(): number {
		return this.text.length;
	}

	kill(): void {
		if (this.child.exitCode === null) this.child.kill("SIGKILL");
	}

	private find(marker: string | RegExp, from: number): Shown | undefined {
		const rest = this.text.slice(from);
		const match = typeof marker === "string" ? rest.indexOf(marker) : rest.search(marker);
		if (match < 0) return undefined;
		const text = typeof marker === "string" ? marker : (rest.match(marker)?.[0] ?? "");
		const end = from + match + text.length;
		const chunk = this.chunks.findLast((candidate) => candidate.offset < end) ?? this.chunks[0];
		return { at: chunk?.at ?? 0, text, end };
	}

	private read(data: Buffer): void {
		this.pending = Buffer.concat([this.pending, data]);
		for (;;) {
			const newline = this.pending.indexOf(10);
			if (newline < 0) return;
			const [time, size, kind] = this.pending.subarray(0, newline).toString().split(" ");
			const at = Number(time);
			const length = Number(size);
			if (this.pending.length < newline + 1 + length) return;
			if (kind === "i") {
				this.pending = this.pending.subarray(newline + 1);
				this.typed.shift()?.(at);
				continue;
			}
			const bytes = this.pending.subarray(newline + 1, newline + 1 + length);
			this.pending = this.pending.subarray(newline + 1 + length);
			this.chunks.push({ at, offset: this.text.length });
			const raw = this.cut + this.decoder.write(bytes);
			const last = raw.lastIndexOf("\x1b");
			const whole = last < 0 || ESCAPE.test(raw.slice(last)) ? raw.length : last;
			this.cut = raw.slice(whole);
			this.text += plainText(raw.slice(0, whole));
			this.wake();
		}
	}

	private wake(): void {
		for (const wake of this.waiters.splice(0)) wake();
	}
}

/** One terminal escape sequence: CSI (cursor moves, colours, modes), OSC, DCS and the like, or a two-byte one. */
const ESCAPE_SOURCE = "\x1b(\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)|[PX^_][^\x1b]*\x1b\\\\|[@-Z\\\\^_])";
/** Whether a string starts with a whole escape sequence. */
const ESCAPE = new RegExp(`^${ESCAPE_SOURCE}`);

/** Text without terminal escape sequences: what a reader sees, in writing order. */
function plainText(raw: string): string {
	return raw.replace(new RegExp(ESCAPE_SOURCE, "g"), "");
}
