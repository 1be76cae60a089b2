/**
 * Locks held by a process for as long as it lives: a lock file records its holder's pid and start
 * identity, so a holder that died (even by kill -9) never keeps it. The daemon's supervisor and
 * every running session take one.
 */
export { isSameProcess, processStartId } from "./process-identity.js";
export { type ProcessLock, type ProcessLockHolder, takeProcessLock } from "./process-lock.js";
