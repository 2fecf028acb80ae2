// Run a build command and show its output only when something is wrong: a non-zero exit,
// or a line that mentions a warning or an error. `node quiet.mjs <command> [args...]`.
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
const chunks = [];
child.stdout.on("data", (chunk) => chunks.push(chunk));
child.stderr.on("data", (chunk) => chunks.push(chunk));
child.on("error", (error) => {
  process.stderr.write(`${command}: ${error.message}\n`);
  process.exitCode = 1;
});
child.on("close", (code) => {
  const output = Buffer.concat(chunks).toString();
  if (code !== 0 || /\b(warn|warning|error)\b/i.test(output)) process.stderr.write(output);
  process.exitCode = code ?? 1;
});
