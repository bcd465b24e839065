#!/usr/bin/env node
// The `execache` command of the npm package. On Linux and macOS it hands over to bin/execache, the
// launcher of the release archives, which finds the platform package's runtime (@execache/linux-x64,
// chosen by npm through its os/cpu fields, as esbuild and biome ship their binaries) and the deno
// dependency itself; install.js (run by npm after installing) puts that launcher in this file's
// place, sparing each command a Node start. On Windows this starts java itself: the runtime of a
// platform package for it if there is one, else a Java 17+ from JAVA_HOME or the PATH.
"use strict";
const { spawn } = require("node:child_process");
const { createRequire } = require("node:module");
const fs = require("node:fs");
const path = require("node:path");

const home = path.join(__dirname, "..");
const platformPackage = `@execache/${process.platform}-${process.arch}`;

function bundledJava() {
  try {
    const runtime = path.join(path.dirname(require.resolve(`${platformPackage}/package.json`)), "runtime");
    const java = path.join(runtime, "bin", process.platform === "win32" ? "java.exe" : "java");
    return fs.existsSync(java) ? java : null;
  } catch {
    return null;
  }
}

// The major version a JDK's `release` file names, or null when it cannot be read (then java is tried).
function majorVersion(javaHome) {
  try {
    const release = fs.readFileSync(path.join(javaHome, "release"), "utf8");
    const version = /^JAVA_VERSION="(\d+)(?:\.(\d+))?/m.exec(release);
    return version ? Number(version[1] === "1" ? version[2] : version[1]) : null;
  } catch {
    return null;
  }
}

function javaOnPath() {
  const names = process.platform === "win32" ? ["java.exe"] : ["java"];
  for (const directory of (process.env.PATH || "").split(path.delimiter)) {
    for (const name of names) {
      const candidate = path.join(directory, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not here
      }
    }
  }
  return null;
}

function systemJava() {
  const javaHome = process.env.JAVA_HOME;
  const fromHome = javaHome && path.join(javaHome, "bin", process.platform === "win32" ? "java.exe" : "java");
  const java = fromHome && fs.existsSync(fromHome) ? fromHome : javaOnPath();
  if (java === null) {
    return { problem: "no Java found" };
  }
  let major = null;
  try {
    major = majorVersion(path.dirname(path.dirname(fs.realpathSync(java))));
  } catch {
    // a broken link: java itself will say so
  }
  return major !== null && major < 17 ? { problem: `${java} is Java ${major}` } : { java };
}

// The `deno` dependency ships its binary in a package per platform (@deno/linux-x64-glibc, ...).
function denoDirectory() {
  const name = `@deno/${process.platform}-${process.arch}${process.platform === "linux" ? "-glibc" : ""}`;
  try {
    const fromDeno = createRequire(require.resolve("deno/package.json"));
    return path.dirname(fromDeno.resolve(`${name}/package.json`));
  } catch {
    return null;
  }
}

let child;
if (process.platform !== "win32") {
  // the link npm made (argv[1] keeps it), which setup writes into the clients' files
  child = spawn(path.join(home, "bin", "execache"), process.argv.slice(2),
    { stdio: "inherit", env: { ...process.env, EXECACHE_INVOKED_AS: process.argv[1] } });
} else {
  const env = { ...process.env };
  let java = bundledJava();
  if (java === null) {
    const found = systemJava();
    if (found.problem) {
      process.stderr.write(`execache: needs Java 17 or newer (${found.problem}): install one (a JRE is enough)`
        + " and put java on the PATH or set JAVA_HOME\n");
      process.exit(3);
    }
    java = found.java;
  }
  // After the person's own PATH: a Deno 2 of theirs comes first, as it does for every installation.
  const deno = denoDirectory();
  if (deno !== null) {
    env.PATH = env.PATH ? env.PATH + path.delimiter + deno : deno;
  }
  child = spawn(java, ["-jar", path.join(home, "lib", "execache-client.jar"), ...process.argv.slice(2)],
    { stdio: "inherit", env });
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`execache: cannot start ${child.spawnfile}: ${error.message}\n`);
  process.exit(3);
});
child.on("exit", (code, signal) => {
  if (signal !== null) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
