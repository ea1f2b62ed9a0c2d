import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ConflictException,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from "@aws-sdk/client-scheduler";
import { type CronFiring, type CronScheduler, SCHEDULED_TIME } from "./cron-scheduler";
import { eventBridgeExpression } from "./schedules";

export interface EventBridgeCronOptions {
  /** the schedule group the stack made for crons */
  group: string;
  /** the role EventBridge Scheduler assumes to send to the queue */
  roleArn: string;
  /** the run worker's queue */
  queueArn: string;
}

/**
 * Crons on EventBridge Scheduler: one schedule per cron, in the stack's group, named by the cron's
 * id, sending `{cron_id, user_id, scheduled_time}` to the run worker's queue at each firing, in UTC. A schedule
 * that cannot be delivered is retried by the scheduler and then counted (the stack alarms on it).
 */
export class EventBridgeCrons implements CronScheduler {
  constructor(
    private readonly options: EventBridgeCronOptions,
    private readonly client = new SchedulerClient({}),
  ) {}

  async put(cron: { cronId: string; userId: string; schedule: string; endTime?: string; enabled: boolean }) {
    const firing: CronFiring = { cron_id: cron.cronId, user_id: cron.userId, scheduled_time: SCHEDULED_TIME };
    const input = {
      Name: cron.cronId,
      GroupName: this.options.group,
      ScheduleExpression: eventBridgeExpression(cron.schedule),
      ScheduleExpressionTimezone: "UTC",
      State: cron.enabled ? ("ENABLED" as const) : ("DISABLED" as const),
      FlexibleTimeWindow: { Mode: "OFF" as const },
      ...(cron.endTime ? { EndDate: new Date(cron.endTime) } : {}),
      Target: {
        Arn: this.options.queueArn,
        RoleArn: this.options.roleArn,
        Input: JSON.stringify(firing),
        RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 },
      },
    };
    try {
      await this.client.send(new CreateScheduleCommand(input));
    } catch (err) {
      // There already (a retried create, or a change): the same schedule, replaced.
      if (!(err instanceof ConflictException)) throw err;
      await this.client.send(new UpdateScheduleCommand(input));
    }
  }

  async remove(cronId: string) {
    try {
      await this.client.send(new DeleteScheduleCommand({ Name: cronId, GroupName: this.options.group }));
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
    }
  }
}
