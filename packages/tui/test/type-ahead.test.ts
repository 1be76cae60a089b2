import { Editor, TUI } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { editorTheme } from "../src/theme.js";
import { typeAheadInto } from "../src/type-ahead.js";
import { VirtualTerminal } from "./virtual-terminal.js";

/** The UI's editor (pi-tui's, as the app sets it up), and every text it submitted. */
function editorOnTerminal(): { editor: Editor; submitted: string[] } {
	const editor = new Editor(new TUI(new VirtualTerminal(80, 24)), editorTheme, { paddingX: 1 });
	const submitted: string[] = [];
	editor.onSubmit = (text) => submitted.push(text);
	return { editor, submitted };
}

describe("keys typed before the UI was ready, put in the editor", () => {
	it("are read as keys: a Backspace erases and an arrow moves the cursor", () => {
		const { editor, submitted } = editorOnTerminal();
		expect(typeAheadInto(editor, "what is six times sevem\x7fn?")).toBe(true);
		expect(editor.getText()).toBe("what is six times seven?");
		const arrows = editorOnTerminal();
		// Left arrow (`ESC [ D`) twice, then text typed there.
		expect(typeAheadInto(arrows.editor, "one three\x1b[D\x1b[D\x1b[D\x1b[D\x1b[Dtwo ")).toBe(true);
		expect(arrows.editor.getText()).toBe("one two three");
		expect(submitted).toEqual([]);
	});

	it("an Enter among them is a new line and the last Enters are dropped: nothing is sent", () => {
		const { editor, submitted } = editorOnTerminal();
		expect(typeAheadInto(editor, "first line\rsecond line\n\r\r")).toBe(true);
		expect(editor.getText()).toBe("first line\nsecond line");
		expect(submitted).toEqual([]);
	});

	it("Enters alone type nothing, and nothing typed is nothing (no hint on a start without keys)", () => {
		const { editor, submitted } = editorOnTerminal();
		expect(typeAheadInto(editor, "\r\r\n")).toBe(false);
		expect(typeAheadInto(editor, "")).toBe(false);
		expect(editor.getText()).toBe("");
		expect(submitted).toEqual([]);
	});
});
