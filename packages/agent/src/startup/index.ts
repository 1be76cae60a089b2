/** Assembling a session from the agent home and the command line. */
export { type StartedSession, type StartOptions, startSession } from "./start-session.js";
