/** One tool result as the arms receive it. */
export interface Observation {
	tool: string;
	command: string | null;
	exitCode: number | null;
	text: string;
	/** The tool reported an error; when absent, a non-zero exit code means an error. */
	isError?: boolean;
}

/** An arm opened for one run (a labelled case, or one trajectory): sees its observations in order. */
export interface ArmRun {
	view(observation: Observation): Promise<string>;
	/** Present when the arm archives what it sees, so that an old view can be aged to a stub (ours). */
	ageing?: AgeingRun;
}

/** An observation seen by an arm that archives it. */
export interface ArchivedView {
	/** What the model is shown now. */
	text: string;
	/** The one line sent instead once it is aged, naming its archive id; null when it could not be archived. */
	stub: string | null;
	/** Its outcome line (`TEST_RESULT ...`), when it had one. */
	headline: string | null;
}

export interface AgeingRun {
	/** Sees an observation, as `view` does, and says what its stub would be. */
	observe(observation: Observation): Promise<ArchivedView>;
	/** The archived bytes of observation `id` (what a read back from the stub's id returns). */
	readBytes(id: string): Promise<Buffer>;
}

export interface Arm {
	name: string;
	/** The public behaviour the arm reproduces, for the report. */
	rule: string;
	/**
	 * Trajectory replay only: observations older than the last `keep` become a one-line stub in later
	 * prompts (the view itself is the raw output while recent). With `every` > 1 the masked boundary
	 * moves only every `every` observations (block masking); with 1 it moves every call (sliding).
	 */
	mask?: { keep: number; every: number };
	/** Only meaningful on trajectories (masking needs a history). */
	trajectoriesOnly?: boolean;
	open(runId: string): Promise<ArmRun>;
}
