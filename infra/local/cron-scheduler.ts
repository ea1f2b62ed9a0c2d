import { Cron } from "croner";
import type { CronFiring, CronScheduler } from "../../shared/cron-scheduler";
import type { QueuePublisher } from "../../shared/queue";

/**
 * EventBridge Scheduler's stand-in: a croner timer per cron, in UTC, sending the cron's firing to
 * the local run worker's queue as the scheduler sends it to SQS in AWS. Timers live as long as the
 * process; a restarted stack schedules the stored crons again (restore.ts). `fireDue` runs what
 * came due by a given time, so a test need not wait for the clock.
 */
export class LocalCronScheduler implements CronScheduler {
  private readonly jobs = new Map<string, { job: Cron; firing: CronFiring; last: Date }>();

  constructor(private readonly queue: QueuePublisher) {}

  async put(cron: { cronId: string; userId: string; schedule: string; endTime?: string; enabled: boolean }) {
    await this.remove(cron.cronId);
    const firing: CronFiring = { cron_id: cron.cronId, user_id: cron.userId };
    const job = new Cron(
      cron.schedule,
      {
        timezone: "UTC",
        paused: !cron.enabled,
        ...(cron.endTime ? { stopAt: cron.endTime } : {}),
        unref: true,
      },
      () => void this.fire(cron.cronId),
    );
    this.jobs.set(cron.cronId, { job, firing, last: new Date() });
  }

  async remove(cronId: string) {
    this.jobs.get(cronId)?.job.stop();
    this.jobs.delete(cronId);
  }

  /** Sends the firing of every scheduled cron that came due after its last firing and by `at`. */
  async fireDue(at: Date): Promise<string[]> {
    const fired: string[] = [];
    for (const [cronId, entry] of this.jobs) {
      const due = entry.job.nextRun(entry.last);
      if (entry.job.isRunning() && due && due <= at) {
        entry.last = at;
        await this.queue.publish({ ...entry.firing, scheduled_time: due.toISOString() });
        fired.push(cronId);
      }
    }
    return fired;
  }

  private async fire(cronId: string) {
    const entry = this.jobs.get(cronId);
    if (!entry) return;
    entry.last = new Date();
    // Schedules run to the minute (five fields): the firing's minute, as EventBridge Scheduler names it.
    const scheduled = new Date(Math.floor(entry.last.getTime() / 60_000) * 60_000);
    await this.queue.publish({ ...entry.firing, scheduled_time: scheduled.toISOString() });
  }

  /** What each schedule sends when it fires, as EventBridge Scheduler keeps it (a scan of what the stack holds reads it). */
  schedules(): CronFiring[] {
    return [...this.jobs.values()].map((entry) => entry.firing);
  }

  /** Stops every timer (the stack's close). */
  stop() {
    for (const { job } of this.jobs.values()) job.stop();
    this.jobs.clear();
  }
}
