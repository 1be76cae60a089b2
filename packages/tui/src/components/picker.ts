import { type Component, Key, matchesKey, type SelectItem, SelectList, truncateToWidth } from "@mariozechner/pi-tui";
import { style } from "../style.js";
import { selectListTheme } from "../theme.js";

/**
 * A titled list to pick from (`/model`, `/resume`, `/tree`): arrows move, typing filters, Enter
 * picks, Esc or Ctrl-C closes without a choice.
 */
export class Picker implements Component {
	private readonly list: SelectList;
	private filter = "";
	onPick?: (value: string) => void;
	onClose?: () => void;

	constructor(
		private readonly title: string,
		items: SelectItem[],
		maxVisible: number,
		selected = 0,
	) {
		this.list = new SelectList(items, maxVisible, selectListTheme, { maxPrimaryColumnWidth: 48 });
		this.list.setSelectedIndex(selected);
		this.list.onSelect = (item) => this.onPick?.(item.value);
		this.list.onCancel = () => this.onClose?.();
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
			this.filter = this.filter.slice(0, -1);
			this.list.setFilter(this.filter);
			return;
		}
		// A printable character narrows the list; everything else is the list's (arrows, Enter, Esc).
		if (data.length === 1 && data >= " " && data !== "\x7f") {
			this.filter += data;
			this.list.setFilter(this.filter);
			return;
		}
		this.list.handleInput(data);
	}

	render(width: number): string[] {
		const hint = this.filter ? `filter: ${this.filter}` : "type to filter · Enter picks · Esc closes";
		return [truncateToWidth(style.bold(this.title) + style.gray(` · ${hint}`), width), ...this.list.render(width)];
	}
}
