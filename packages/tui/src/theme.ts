import type { EditorTheme, MarkdownTheme, SelectListTheme } from "@mariozechner/pi-tui";
import { highlightCode } from "./highlight.js";
import { style } from "./style.js";

export { style };

export const markdownTheme: MarkdownTheme = {
	heading: (text) => style.bold(style.cyan(text)),
	link: style.underline,
	linkUrl: style.gray,
	code: style.yellow,
	codeBlock: (text) => text,
	codeBlockBorder: style.gray,
	quote: style.italic,
	quoteBorder: style.gray,
	hr: style.gray,
	listBullet: style.cyan,
	bold: style.bold,
	italic: style.italic,
	strikethrough: style.strike,
	underline: style.underline,
	highlightCode: (code, lang) => highlightCode(code, lang).split("\n"),
};

export const selectListTheme: SelectListTheme = {
	selectedPrefix: style.cyan,
	selectedText: (text) => style.bold(style.cyan(text)),
	description: style.gray,
	scrollInfo: style.gray,
	noMatch: style.gray,
};

export const editorTheme: EditorTheme = {
	borderColor: style.gray,
	selectList: selectListTheme,
};
