/**
 * The screen shown while the session starts: the header, an empty editor and a status line saying
 * the session is starting, drawn as soon as this package has loaded (a fraction of a second)
 * instead of a blank terminal for the seconds a worker or the session takes. The UI erases it when
 * it draws its own first frame; keys typed meanwhile are held for its editor (see `TypeAhead`).
 */
import { truncateToWidth } from "@mariozechner/pi-tui";
import { style } from "./style.js";

/** A drawn starting screen; `erase` leaves the cursor where the screen began (idempotent). */
export interface StartingScreen {
	erase(): void;
}

/** The one screen shown, erased by the UI's start (or by whoever drew it, when no UI follows). */
let shown: { lines: number; stdout: NodeJS.WriteStream } | undefined;

/**
 * Draw the starting screen on `stdout` for a session in `cwd`. Lines are cut to the terminal's
 * width so that each takes one row and erasing knows how far to go back.
 */
export function showStartingScreen(stdout: NodeJS.WriteStream, cwd: string): StartingScreen {
	eraseStartingScreen();
	const width = Math.max(20, stdout.columns ?? 80);
	// One column short of the width: a line that fills the row would wrap on some terminals.
	const fit = (text: string) => truncateToWidth(text, width - 1);
	const rule = style.gray("─".repeat(width - 1));
	const lines = [
		fit(` ${style.bold("prime-agent")} ${style.gray(`· starting the session · ${cwd}`)}`),
		"",
		rule,
		"",
		rule,
		style.gray(" ○ starting the session…"),
	];
	stdout.write(lines.join("\n"));
	shown = { lines: lines.length, stdout };
	return { erase: eraseStartingScreen };
}

/** Erase the starting screen, if one is shown: the cursor goes back to its first line, cleared below. */
export function eraseStartingScreen(): void {
	if (!shown) return;
	const { lines, stdout } = shown;
	shown = undefined;
	stdout.write(`\r${lines > 1 ? `\x1b[${lines - 1}A` : ""}\x1b[J`);
}
