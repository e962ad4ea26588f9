export { startStandalone, type RunningStandalone, type StandaloneOptions } from "./standalone.js";
