export { CellOutput, type CellOutputOptions, type CollectedOutput } from "./cell-output.js";
export { type CellOutputParts, capText, errorText, formatCellOutput } from "./format.js";
export { type CutText, cutTextOf, KERNEL_CUT_KEY, savedOf } from "./kernel-cut.js";
