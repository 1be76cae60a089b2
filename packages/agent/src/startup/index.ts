/** Assembling a session from the agent home and the command line. */
export { type StartOptions, startSession } from "./start-session.js";
export type { StartedSession } from "./started-session.js";
