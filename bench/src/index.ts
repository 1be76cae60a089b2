/** The offline benchmark of Prime Context against the output handling of other agents. */
export * from "./arms/index.js";
export {
	type BenchmarkOptions,
	type BenchmarkResults,
	runBenchmark,
	runSpeedOnly,
	SMOKE,
	type SpeedOnlyResults,
	smokeCases,
} from "./bench.js";
export * from "./corpus/index.js";
export * from "./measure/retention.js";
export * from "./measure/size.js";
export { chartOf, writeReport, writeSpeedReport } from "./report/index.js";
export { type LabelledArmResult, runLabelled } from "./run/labelled.js";
export { runSpeed, type SpeedResult } from "./run/speed.js";
export { runTrajectories, type TrajectoryArmResult } from "./run/trajectories.js";
