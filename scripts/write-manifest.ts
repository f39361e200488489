/** Writes openclaw.plugin.json and the settings tables of README.md and docs/configuration.md from src/. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { manifestText, withConfigurationTable } from "../src/manifest.js";

writeFileSync(new URL("../openclaw.plugin.json", import.meta.url), manifestText());
for (const document of ["../README.md", "../docs/configuration.md"]) {
  const url = new URL(document, import.meta.url);
  if (existsSync(url)) writeFileSync(url, withConfigurationTable(readFileSync(url, "utf8")));
}
console.log("wrote openclaw.plugin.json and the settings tables");
