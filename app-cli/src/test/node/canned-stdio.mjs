// The pipe's floor: answers every JSON-RPC request line at once with the same tool result,
// parsing nothing but the id. What any stdio MCP server costs at least, measured by SpeedReport
// with the same bare line client as serve.
import { createInterface } from "node:readline";

const result = ',"result":{"content":[{"type":"text","text":"{\\"result\\":2}"}],"structuredContent":{"result":2}}}\n';
createInterface({ input: process.stdin }).on("line", (line) => {
  const id = /"id":(\d+|"[^"]*")/.exec(line);
  if (id) process.stdout.write('{"jsonrpc":"2.0","id":' + id[1] + result);
});
