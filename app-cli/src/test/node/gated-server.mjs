// The lab server behind a gate: it answers nothing (not even initialize) until the file named by
// LAB_GATE exists, then it is lab-server.mjs. A server still starting, for as long as a test wants.
import { existsSync } from "node:fs";

while (!existsSync(process.env.LAB_GATE)) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await import("./lab-server.mjs");
