import { Duration } from "aws-cdk-lib";
import type { IRestApi } from "aws-cdk-lib/aws-apigateway";
import { Alarm, ComparisonOperator, Metric, TreatMissingData, type IMetric } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import {
  DefaultDashboardFactory,
  MonitoringFacade,
  SnsAlarmActionStrategy,
  type MonitoringFacade as Facade,
} from "cdk-monitoring-constructs";
import { Construct } from "constructs";

/** The EMF namespace the functions publish to (shared/metrics.ts). */
const NAMESPACE = "AgentBackend";

/**
 * On-call's view of the stack, built with cdk-monitoring-constructs: one dashboard (replies,
 * model latency, tool calls, errors, queue depth and age, dead letters) and alarms that all
 * notify one SNS topic, with an optional email subscription. Every alarm has that action.
 */
export class Monitoring extends Construct {
  readonly topic: Topic;
  private readonly facade: Facade;

  constructor(scope: Construct, id: string, { prefix, alarmEmail }: { prefix: string; alarmEmail?: string }) {
    super(scope, id);
    this.topic = new Topic(this, "Alarms", { displayName: `${prefix} alarms`, enforceSSL: true });
    if (alarmEmail) this.topic.addSubscription(new EmailSubscription(alarmEmail));
    this.facade = new MonitoringFacade(this, "Facade", {
      alarmFactoryDefaults: {
        alarmNamePrefix: prefix,
        actionsEnabled: true,
        action: new SnsAlarmActionStrategy({ onAlarmTopic: this.topic }),
        datapointsToAlarm: 1,
        evaluationPeriods: 1,
      },
      metricFactoryDefaults: { period: Duration.minutes(5) },
      dashboardFactory: new DefaultDashboardFactory(this, "Dashboards", {
        dashboardNamePrefix: prefix,
        createDashboard: true,
        createSummaryDashboard: false,
        createAlarmDashboard: false,
      }),
    });
  }

  /** The chat turn's own figures, from the functions' embedded metrics. */
  agentMetrics(services: string[]): void {
    const metric = (name: string, statistic: string, label: string) =>
      services.map(
        (service) =>
          new Metric({
            namespace: NAMESPACE,
            metricName: name,
            dimensionsMap: { service },
            statistic,
            label: `${label} (${service})`,
            period: Duration.minutes(5),
          }),
      );
    this.facade.monitorCustom({
      alarmFriendlyName: "Agent",
      humanReadableName: "Agent turns",
      metricGroups: [
        { title: "Replies", metrics: metric("Replies", "Sum", "replies") },
        { title: "Model latency p90 (ms)", metrics: metric("ModelLatency", "p90", "model p90") },
        { title: "Tool calls", metrics: metric("ToolCalls", "Sum", "tool calls") },
        { title: "Dead-lettered records", metrics: metric("DeadLettered", "Sum", "dead-lettered") },
      ],
    });
  }

  /** Any datapoint above zero of a metric the facade has no monitor for alarms, to the same topic. */
  metricAlarm(id: string, metric: IMetric, description: string): void {
    const alarm = new Alarm(this, id, {
      metric,
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
  }

  /** Any error or throttle of a function alarms. */
  function(fn: IFunction, name: string): void {
    this.facade.monitorLambdaFunction({
      lambdaFunction: fn,
      alarmFriendlyName: name,
      humanReadableName: name,
      addFaultCountAlarm: { Critical: { maxErrorCount: 0 } },
      addThrottlesCountAlarm: { Critical: { maxErrorCount: 0 } },
    });
  }

  /** A queue's depth and age on the dashboard; anything in its dead-letter queue alarms. */
  queue(queue: IQueue, deadLetterQueue: IQueue, name: string, maxAge: Duration): void {
    this.facade.monitorSqsQueueWithDlq({
      queue,
      deadLetterQueue,
      alarmFriendlyName: name,
      humanReadableName: name,
      addDeadLetterQueueMaxSizeAlarm: { Critical: { maxMessageCount: 0 } },
      addQueueMaxMessageAgeAlarm: { Warning: { maxAgeInSeconds: maxAge.toSeconds() } },
    });
  }

  /** More than 5% of requests answered 5xx over 5 minutes. */
  api(api: IRestApi, stage: string): void {
    this.facade.monitorApiGateway({
      api,
      apiStage: stage,
      alarmFriendlyName: "Api",
      humanReadableName: "API",
      add5XXFaultRateAlarm: { Critical: { maxErrorRate: 0.05 } },
    });
  }
}
