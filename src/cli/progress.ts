/**
 * A progress bar on stderr for the long commands (doctor over many conversations, compact, backup), drawn only for a
 * person: stderr is a terminal and the output is not --json (LCM_PROGRESS=1 forces it, LCM_PROGRESS=0 hides it).
 * Scripts and pipes get the result alone.
 */
import cliProgress from "cli-progress";

export interface Progress {
  /** Sets how far along it is: `done` of `total` (the total may change as it becomes known). */
  update(done: number, total: number, label?: string): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, stop() {} };

export function progressBar(title: string, options: { json: boolean; stream: NodeJS.WriteStream; env: NodeJS.ProcessEnv }): Progress {
  const forced = options.env.LCM_PROGRESS;
  const shown = forced === "1" || (forced !== "0" && !options.json && options.stream.isTTY === true);
  if (!shown) return SILENT;
  const bar = new cliProgress.SingleBar({
    format: `${title} [{bar}] {percentage}% · {value}/{total} {label}`,
    stream: options.stream,
    hideCursor: true,
    clearOnComplete: true,
    noTTYOutput: forced === "1",
    notTTYSchedule: 1_000,
  }, cliProgress.Presets.shades_classic);
  let started = false;
  return {
    update(done, total, label = "") {
      if (!started) {
        bar.start(Math.max(1, total), 0, { label });
        started = true;
      }
      bar.setTotal(Math.max(1, total));
      bar.update(Math.min(done, Math.max(1, total)), { label });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
