import { meter, type Meter } from "./dynamo-meter";
import { backendsHarness } from "./stack";

/**
 * The local backends for one test file, started before its tests and closed after, with a meter
 * on their DynamoDB client (every request counted): read `harness` and `meter` inside tests.
 */
export function meteredBackends() {
  const stack = {} as { harness: Awaited<ReturnType<typeof backendsHarness>>; meter: Meter };
  beforeAll(async () => {
    stack.harness = await backendsHarness();
    stack.meter = meter(stack.harness.dynamo.client);
  }, 60_000);
  afterAll(() => stack.harness.close());
  return stack;
}
