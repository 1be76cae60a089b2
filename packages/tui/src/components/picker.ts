import {
	type Component,
	fuzzyFilter,
	Key,
	matchesKey,
	type SelectItem,
	SelectList,
	truncateToWidth,
} from "@mariozechner/pi-tui";
import { style } from "../style.js";
import { selectListTheme } from "../theme.js";

/**
 * A titled list to pick from (`/model`, `/resume`, `/tree`, the still-running question), shown in
 * the editor's place: arrows move, typing filters, Enter picks, Esc or Ctrl-C closes without a
 * choice.
 */
export class Picker implements Component {
	private list: SelectList;
	private filter = "";
	onPick?: (value: string) => void;
	onClose?: () => void;

	constructor(
		private readonly title: string,
		private readonly items: SelectItem[],
		private readonly maxVisible: number,
		selected = 0,
	) {
		this.list = this.listOf(items);
		this.list.setSelectedIndex(selected);
	}

	/** The list for the items that match the filter (fuzzy, on what is shown). */
	private listOf(items: SelectItem[]): SelectList {
		// The labels' column as wide as the widest label (up to 64): the descriptions follow close.
		const list = new SelectList(items, this.maxVisible, selectListTheme, {
			minPrimaryColumnWidth: 12,
			maxPrimaryColumnWidth: 64,
		});
		list.onSelect = (item) => this.onPick?.(item.value);
		list.onCancel = () => this.onClose?.();
		return list;
	}

	private setFilter(filter: string): void {
		this.filter = filter;
		this.list = this.listOf(filter ? fuzzyFilter(this.items, filter, (item) => item.label) : this.items);
	}

	invalidate(): void {
		this.list.invalidate();
	}

	handleInput(data: string): void {
		if (matchesKey(data, Key.ctrl("c"))) {
			this.onClose?.();
			return;
		}
		if (matchesKey(data, Key.backspace)) {
			this.setFilter(this.filter.slice(0, -1));
			return;
		}
		// A printable character narrows the list; everything else is the list's (arrows, Enter, Esc).
		if (data.length === 1 && data >= " " && data !== "\x7f") {
			this.setFilter(this.filter + data);
			return;
		}
		this.list.handleInput(data);
	}

	render(width: number): string[] {
		const hint = this.filter ? `filter: ${this.filter}` : "type to filter · Enter picks · Esc closes";
		// Ruled above and below as the editor whose place it takes.
		const rule = style.gray("─".repeat(width));
		return [
			rule,
			truncateToWidth(style.bold(this.title) + style.gray(` · ${hint}`), width),
			...this.list.render(width),
			rule,
		];
	}
}
