import { AppError } from "../../shared/errors";

/** The AppError a request was refused with (the test fails if it was not refused so). */
export async function refusal(run: Promise<unknown>): Promise<AppError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}
