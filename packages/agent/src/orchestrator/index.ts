/** The session orchestrator: a session, the agent loop and the tools, wired together. */
export { AgentSession, type AgentSessionOptions, type RunOutcome } from "./agent-session.js";
