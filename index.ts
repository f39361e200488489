export { default } from "./src/plugin.js";
