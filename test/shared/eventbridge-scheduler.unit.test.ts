import {
  ConflictException,
  CreateScheduleCommand,
  type DeleteScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  type UpdateScheduleCommand,
} from "@aws-sdk/client-scheduler";
import { EventBridgeCrons } from "../../shared/eventbridge-scheduler";

// EventBridge Scheduler cannot run here: the requests are checked against its documented
// CreateSchedule / UpdateSchedule / DeleteSchedule shapes, its errors as its client throws them.

const options = {
  group: "agent-crons",
  roleArn: "arn:aws:iam::123456789012:role/scheduler",
  queueArn: "arn:aws:sqs:us-east-1:123456789012:runs",
};

function client(fail: (command: unknown) => Error | undefined = () => undefined) {
  const sent: unknown[] = [];
  const fake = {
    send: async (command: unknown) => {
      sent.push(command);
      const error = fail(command);
      if (error) throw error;
      return {};
    },
  } as unknown as SchedulerClient;
  return { sent, fake };
}

const cron = { cronId: "6f9619ff-8b86-4011-b42d-00cf4fc964ff", userId: "ann", schedule: "30 9 * * 1-5", enabled: true };

describe("crons on EventBridge Scheduler", () => {
  it("creates one schedule per cron in the group: UTC, no flexible window, the firing to the runs queue with the role", async () => {
    const { sent, fake } = client();
    await new EventBridgeCrons(options, fake).put({ ...cron, endTime: "2027-01-01T00:00:00.000Z" });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeInstanceOf(CreateScheduleCommand);
    expect((sent[0] as CreateScheduleCommand).input).toEqual({
      Name: cron.cronId,
      GroupName: "agent-crons",
      ScheduleExpression: "cron(30 9 ? * MON-FRI *)",
      ScheduleExpressionTimezone: "UTC",
      State: "ENABLED",
      FlexibleTimeWindow: { Mode: "OFF" },
      EndDate: new Date("2027-01-01T00:00:00.000Z"),
      Target: {
        Arn: options.queueArn,
        RoleArn: options.roleArn,
        // The scheduler writes each firing's scheduled time in place of its context attribute.
        Input: JSON.stringify({
          cron_id: cron.cronId,
          user_id: "ann",
          scheduled_time: "<aws.scheduler.scheduled-time>",
        }),
        RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 3600 },
      },
    });
  });

  it("replaces a schedule that is there already (a change, or a retried create), disabled when the cron is", async () => {
    const { sent, fake } = client((c) =>
      c instanceof CreateScheduleCommand
        ? new ConflictException({ Message: "exists", message: "exists", $metadata: {} })
        : undefined,
    );
    await new EventBridgeCrons(options, fake).put({ ...cron, enabled: false });
    expect(sent.map((c) => c!.constructor.name)).toEqual(["CreateScheduleCommand", "UpdateScheduleCommand"]);
    expect((sent[1] as UpdateScheduleCommand).input).toMatchObject({ Name: cron.cronId, State: "DISABLED" });
  });

  it("removes a schedule, a missing one included; other failures are not swallowed", async () => {
    const missing = client(() => new ResourceNotFoundException({ Message: "none", message: "none", $metadata: {} }));
    await new EventBridgeCrons(options, missing.fake).remove(cron.cronId);
    expect((missing.sent[0] as DeleteScheduleCommand).input).toEqual({ Name: cron.cronId, GroupName: "agent-crons" });
    const denied = client(() => Object.assign(new Error("denied"), { name: "AccessDeniedException" }));
    await expect(new EventBridgeCrons(options, denied.fake).remove(cron.cronId)).rejects.toThrow("denied");
  });
});
