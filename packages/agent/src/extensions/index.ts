/** The extension API: events, tools, commands and state for modules loaded into a session. */
export { projectExtensionsDir, projectRoot, userExtensionsDir } from "./discover.js";
export { type LoadExtensionsOptions, loadExtensions } from "./load.js";
export {
	type InstalledPackage,
	installedPackages,
	installPackage,
	listedPackages,
	type PackageScope,
	packageScope,
	removePackage,
} from "./packages.js";
export { type ExtensionHost, ExtensionRunner } from "./runner.js";
export type * from "./types.js";
