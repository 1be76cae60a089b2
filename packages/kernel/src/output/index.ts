export { CellOutput, type CellOutputOptions, type CollectedOutput } from "./cell-output.js";
export { type CellOutputParts, capText, errorText, formatCellOutput } from "./format.js";
