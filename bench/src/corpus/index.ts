export { type CaseMeta, type LabelledCase, type LabelledCounts, readLabelledCorpus } from "./labelled.js";
export { parseSession } from "./session.js";
export {
	listTrajectoryFiles,
	parseTrajectory,
	readTrajectory,
	type Trajectory,
	type TrajectoryStep,
} from "./trajectory.js";
