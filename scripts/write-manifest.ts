/** Writes openclaw.plugin.json from src/manifest.ts. */
import { writeFileSync } from "node:fs";
import { manifestText } from "../src/manifest.js";

writeFileSync(new URL("../openclaw.plugin.json", import.meta.url), manifestText());
console.log("wrote openclaw.plugin.json");
