/**
 * Calls a stopped process left without a result: what a call under way has printed is kept beside
 * the session while it runs, and a session picked up again answers such a call with it.
 */
export { answerUnfinishedCalls, cutOffCallText, notRunCallText, unrecordedCallText } from "./answer.js";
export {
	RUNNING_CALL_FILE,
	type RunningCall,
	RunningCallRecord,
	readRunningCall,
	removeRunningCall,
} from "./record.js";
