// Run by npm after installing the package. On Linux and macOS the command npm links, bin/execache.js,
// becomes the bash launcher bin/execache itself, as esbuild's install script puts its binary in its
// JS shim's place: each command then starts no Node (about 40 ms on an idle machine, more than a
// cache hit's own work). Installed without scripts, or on Windows, the Node launcher stays and
// works the same, only slower to start.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

if (process.platform !== "win32") {
  const launcher = path.join(__dirname, "execache");
  const command = path.join(__dirname, "execache.js");
  const staged = `${command}.${process.pid}`;
  try {
    fs.copyFileSync(launcher, staged);
    fs.chmodSync(staged, 0o755);
    fs.renameSync(staged, command);
  } catch {
    fs.rmSync(staged, { force: true });
  }
}
