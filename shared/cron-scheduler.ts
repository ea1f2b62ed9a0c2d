/**
 * Where a cron's schedule lives: EventBridge Scheduler in AWS (shared/eventbridge-scheduler.ts), a
 * timer in the local stack (infra/local/cron-scheduler.ts). Each firing sends the run worker's
 * queue the cron's message, `{cron_id, user_id, scheduled_time}`; the worker makes the run (graph/agent-server/crons.ts).
 */
export interface CronScheduler {
  /** Creates or replaces the schedule of a cron. */
  put(cron: { cronId: string; userId: string; schedule: string; endTime?: string; enabled: boolean }): Promise<void>;
  /** Removes a cron's schedule; removing one that is not there is not an error. */
  remove(cronId: string): Promise<void>;
}

/** The message a firing sends: which cron, and whose (its record is in the user's partition). */
export interface CronFiring {
  cron_id: string;
  user_id: string;
  /**
   * The time the firing was scheduled for (EventBridge Scheduler's `<aws.scheduler.scheduled-time>`):
   * the same in every copy of one firing, however it reached the queue, so one firing makes one run.
   * Absent from the firings of schedules an earlier version made.
   */
  scheduled_time?: string;
}

/** EventBridge Scheduler's context attribute that it replaces with the firing's scheduled time. */
export const SCHEDULED_TIME = "<aws.scheduler.scheduled-time>";
