/**
 * Prime Agent's terminal UI on pi-tui. `prime-agent` loads this package by name when it starts on
 * a terminal (see `loadTerminalUi` in the agent) and calls `runInteractiveMode`.
 */
export { type AppExit, InteractiveApp } from "./app.js";
export { listFolder, PromptCompletion } from "./autocomplete.js";
export { ARCHIVE_PAGE_LINES, CapsuleCard, type CapsuleInfo, parseCapsule } from "./components/capsule.js";
export { CellView } from "./components/cell.js";
export { AssistantView, NoteView, UserView } from "./components/messages.js";
export { Picker } from "./components/picker.js";
export { ProjectReviewDialog, REVIEW_DETAIL_LINES } from "./components/project-review.js";
export { formatStatus, type KernelState, type StatusInfo, StatusLine, shortCount } from "./components/status-line.js";
export { highlightCode } from "./highlight.js";
export { askProjectReview, reviewProject } from "./project-review.js";
export { runInteractiveMode } from "./run.js";
export { eraseStartingScreen, type StartingScreen, showStartingScreen } from "./starting-screen.js";
export { plainText } from "./style.js";
export { branchTarget, treeItems, treeRows } from "./tree.js";
