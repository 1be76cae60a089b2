import { ProcessTerminal, type Terminal, TUI } from "@mariozechner/pi-tui";
import type { ProjectReview } from "prime-agent";
import { ProjectReviewDialog } from "./components/project-review.js";

/**
 * Ask on `terminal` whether the project's code in `review` may run (see `ProjectReviewDialog`);
 * resolves with the answer once the user picks, after the dialog has stopped drawing.
 */
export function askProjectReview(terminal: Terminal, review: ProjectReview): Promise<boolean> {
	const tui = new TUI(terminal);
	const dialog = new ProjectReviewDialog(review);
	tui.addChild(dialog);
	tui.setFocus(dialog);
	return new Promise((resolve) => {
		dialog.onAnswer = (trusted) => {
			dialog.onAnswer = undefined;
			tui.stop();
			resolve(trusted);
		};
		tui.start();
	});
}

/** `InteractiveUi.reviewProject`: the review on the process's terminal, before the UI starts. */
export function reviewProject(review: ProjectReview): Promise<boolean> {
	return askProjectReview(new ProcessTerminal(), review);
}
