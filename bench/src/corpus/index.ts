export { listTrajectoryFiles, readTrajectory } from "./files.js";
export { type CaseMeta, type LabelledCase, type LabelledCounts, readLabelledCorpus } from "./labelled.js";
export { parseSession } from "./session.js";
export { parseTrajectory, type Trajectory, type TrajectoryStep } from "./trajectory.js";
