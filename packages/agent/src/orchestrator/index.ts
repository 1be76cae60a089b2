/** Orchestrator: wires a session, its extensions and compaction to the pi-agent-core loop. */
export { AgentSession, type AgentSessionOptions, type SessionNotice } from "./agent-session.js";
export { CompactionScheduler } from "./compaction-scheduler.js";
export { type BridgedSession, ExtensionBridge, type StartAnnouncement } from "./extension-bridge.js";
export { refuseOversizeHistory, refuseOversizePrompt } from "./oversize-message.js";
export { PromptBoundaries, SYSTEM_PROMPT_ENTRY } from "./prompt-boundary.js";
export type { RunOutcome } from "./run-outcome.js";
export { type RunSupervisor, type StopVerdict, type WouldStopEvent, wouldStop } from "./run-supervisor.js";
export type { LoopRun, SessionPhase, SessionState, Wakes } from "./session-state.js";
export { parseSlashCommand, promptText, type SlashCommandCall } from "./slash-commands.js";
