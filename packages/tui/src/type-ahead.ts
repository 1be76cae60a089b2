import { type Editor, StdinBuffer } from "@mariozechner/pi-tui";

/**
 * Put the keys typed before the UI was ready in `editor`, read as the editor reads keys (a
 * Backspace typed then still erases). An Enter among them is a new line, and a last one is
 * dropped: nothing is sent blind. The text was typed before the header said which session,
 * model and folder it goes to and before a notice (project code held back, a session resumed
 * elsewhere) could be read, and the session may still be starting; one more Enter sends it.
 * Returns whether anything was typed (Enters alone are nothing).
 */
export function typeAheadInto(editor: Pick<Editor, "handleInput" | "insertTextAtCursor">, keys: string): boolean {
	// Nothing typed (most starts): the splitter would still hand back one empty key.
	if (keys === "") return false;
	const sequences: string[] = [];
	const split = new StdinBuffer();
	split.on("data", (sequence) => sequences.push(sequence));
	split.process(keys);
	sequences.push(...split.flush());
	split.destroy();
	const enter = (sequence: string) => sequence === "\r" || sequence === "\n";
	while (sequences.length > 0 && enter(sequences.at(-1) as string)) sequences.pop();
	if (sequences.length === 0) return false;
	for (const sequence of sequences) {
		if (enter(sequence)) editor.insertTextAtCursor("\n");
		else editor.handleInput(sequence);
	}
	return true;
}
