import { Duration, Names, Stack, Validations } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal, type IGrantable } from "aws-cdk-lib/aws-iam";
import { ScheduleGroup } from "aws-cdk-lib/aws-scheduler";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { Monitoring } from "./monitoring";

/**
 * The Agent Server API's crons in AWS: a schedule group the functions put each cron's schedule in
 * (shared/eventbridge-scheduler.ts), and the role EventBridge Scheduler assumes to send each firing
 * to the run worker's queue: that send and nothing else. A firing dropped or failing at its target
 * alarms.
 */
export class CronSchedules extends Construct {
  readonly group: ScheduleGroup;
  readonly role: Role;

  constructor(scope: Construct, id: string, { queue, monitoring }: { queue: Queue; monitoring: Monitoring }) {
    super(scope, id);
    this.group = new ScheduleGroup(this, "Group", {
      scheduleGroupName: `${Names.uniqueResourceName(this, { maxLength: 40 })}`,
    });
    this.role = new Role(this, "SchedulerRole", {
      assumedBy: new ServicePrincipal("scheduler.amazonaws.com"),
      description: "EventBridge Scheduler sends crons' firings to the run worker's queue",
    });
    queue.grantSendMessages(this.role);
    monitoring.metricAlarm(
      "CronFiringsFailed",
      this.group.metricTargetErrors({ period: Duration.minutes(5), statistic: "Sum" }),
      "a cron's firing failed at its target (the run worker's queue)",
    );
    monitoring.metricAlarm(
      "CronFiringsDropped",
      this.group.metricDropped({ period: Duration.minutes(5), statistic: "Sum" }),
      "a cron's firing was dropped after its retries",
    );
  }

  /** A function that makes and removes crons: their schedules in this group, with this role passed. */
  grantManage(fn: IGrantable & { addEnvironment(key: string, value: string): unknown }, queue: Queue): void {
    this.grantRemove(fn, queue);
    this.group.grantWriteSchedules(fn);
    fn.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["iam:PassRole"],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } },
      }),
    );
  }

  /**
   * A function that only removes crons' schedules (an erasure): it deletes schedules in this group,
   * and makes none, so it passes no role.
   */
  grantRemove(fn: IGrantable & { addEnvironment(key: string, value: string): unknown }, queue: Queue): void {
    // The scheduler's client is built from all three (shared/backends.ts); only the group is acted on.
    fn.addEnvironment("CRON_SCHEDULE_GROUP", this.group.scheduleGroupName);
    fn.addEnvironment("CRON_SCHEDULER_ROLE_ARN", this.role.roleArn);
    fn.addEnvironment("CRON_TARGET_QUEUE_ARN", queue.queueArn);
    this.group.grantDeleteSchedules(fn);
    Validations.of(Stack.of(this)).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${this.group.scheduleGroupName}/*]`,
      reason:
        "A schedule per cron, named by the cron's id when it is made: the functions may manage schedules in the crons' own group only.",
    });
  }
}
