/** Orchestrator: wires a session, its extensions and compaction to the pi-agent-core loop. */
export { AgentSession, type AgentSessionOptions, type RunOutcome, type SessionNotice } from "./agent-session.js";
export { parseSlashCommand, type SlashCommandCall } from "./slash-commands.js";
