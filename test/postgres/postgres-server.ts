/**
 * A real PostgreSQL server for the tests, on 127.0.0.1: Debian's packages (installed with apt-get when missing),
 * a fresh cluster in a temporary folder, started on a free port and stopped by its PID. Root cannot run PostgreSQL,
 * so as root the server runs as the `postgres` user the package creates (setpriv execs it: the PID is the server's).
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication: the server listens on loopback only). */
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

const DEBIAN_BIN = "/usr/lib/postgresql";

/** The folder of Debian's PostgreSQL programs, installing the packages when missing. */
export function ensurePostgres(log: (line: string) => void = console.log): string {
  let bin = findBin();
  if (bin) return bin;
  log("PostgreSQL is missing: installing Debian's postgresql and postgresql-contrib");
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "postgresql", "postgresql-contrib"], {
    stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  bin = findBin();
  if (!bin) throw new Error(`PostgreSQL was installed but no ${DEBIAN_BIN}/<version>/bin/initdb was found`);
  return bin;
}

function findBin(): string | null {
  if (!existsSync(DEBIAN_BIN)) return null;
  const versions = readdirSync(DEBIAN_BIN).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(DEBIAN_BIN, version, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "postgres"))) return bin;
  }
  return null;
}

/** Starts a new cluster; `settings` are extra server settings (name → value). */
export async function startPostgres(options: { settings?: Record<string, string>; log?: (line: string) => void; port?: number } = {}): Promise<PostgresServer> {
  const bin = ensurePostgres(options.log);
  const asRoot = process.getuid?.() === 0;
  const folder = mkdtempSync(join(tmpdir(), "lcm-pg-"));
  const dataDir = join(folder, "data");
  if (asRoot) {
    chmodSync(folder, 0o755);
    chownSync(folder, uid("postgres"), gid("postgres"));
  }
  const run = (program: string, args: string[]) => (asRoot ? ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", join(bin, program), ...args]] : [join(bin, program), args]) as [string, string[]];
  const [initProgram, initArgs] = run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]);
  execFileSync(initProgram, initArgs, { stdio: "pipe" });
  const port = options.port ?? await freePort();
  const settings: Record<string, string> = {
    listen_addresses: "127.0.0.1", port: String(port), unix_socket_directories: folder,
    fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "300", shared_buffers: "256MB",
    ...options.settings,
  };
  const [serverProgram, serverArgs] = run("postgres", ["-D", dataDir, ...Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`])]);
  const child = spawn(serverProgram, serverArgs, { stdio: ["ignore", "ignore", "pipe"], detached: false });
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000); });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitReady(bin, port, () => child.exitCode !== null ? `the server exited (${child.exitCode}): ${output}` : null);
  const pid = child.pid!;
  let stopped: Promise<void> | null = null;
  return {
    url, port, pid,
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        process.kill(pid, "SIGINT"); // fast shutdown: rolls back open transactions, closes connections
        setTimeout(() => { if (child.exitCode === null) process.kill(pid, "SIGKILL"); }, 10_000).unref();
      }).then(() => rmSync(folder, { recursive: true, force: true }));
      return stopped;
    },
  };
}

async function waitReady(bin: string, port: number, failed: () => string | null): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const failure = failed();
    if (failure) throw new Error(failure);
    try {
      execFileSync(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"], { stdio: "pipe" });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`PostgreSQL on 127.0.0.1:${port} was not ready within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function uid(user: string): number {
  return Number(execFileSync("id", ["-u", user]).toString().trim());
}

function gid(user: string): number {
  return Number(execFileSync("id", ["-g", user]).toString().trim());
}
