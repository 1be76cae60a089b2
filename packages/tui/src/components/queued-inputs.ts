import type { Component } from "@mariozechner/pi-tui";
import type { QueuedInput } from "prime-agent";
import { UserView } from "./messages.js";

/** What each kind of queued input waits for, as the line under it says. */
const WAITS_FOR: Record<QueuedInput["kind"], string> = {
	steer: "queued: the agent reads it after the current step",
	follow_up: "queued: after this turn",
	prompt: "queued: runs when the turn ends",
};

/**
 * What the session holds queued (steering, follow-ups, commands typed while the agent works),
 * above the editor. It reads the session's list, so every view shows the same items, those queued
 * by another view or before an `attach` included; nothing shows when nothing waits.
 */
export class QueuedInputs implements Component {
	constructor(private readonly queued: () => readonly QueuedInput[]) {}

	invalidate(): void {}

	render(width: number): string[] {
		const lines: string[] = [];
		for (const input of this.queued()) lines.push("", ...new UserView(input.text, WAITS_FOR[input.kind]).render(width));
		return lines;
	}
}
