import type { Message } from "@aws-sdk/client-bedrock-runtime";

/**
 * What Bedrock's Converse API would reject in a request's `messages`, per its documentation:
 * the first message is the user's, roles alternate, no message is empty, every toolUse is answered
 * by a toolResult in the very next (user) message, and every toolResult answers a toolUse of the
 * message just before it. Empty when the sequence is valid.
 */
export function converseProblems(messages: Message[] | undefined): string[] {
  const problems: string[] = [];
  if (!messages?.length) return ["no messages"];
  if (messages[0]!.role !== "user") problems.push(`message 0 is from ${messages[0]!.role}, not the user`);
  messages.forEach((m, i) => {
    if (!m.content?.length) problems.push(`message ${i} (${m.role}) is empty`);
    if (i > 0 && messages[i - 1]!.role === m.role) problems.push(`messages ${i - 1} and ${i} are both ${m.role}`);
    const uses = (m.content ?? []).flatMap((b) => (b.toolUse ? [b.toolUse.toolUseId] : []));
    const results = new Set(
      (messages[i + 1]?.content ?? []).flatMap((b) => (b.toolResult ? [b.toolResult.toolUseId] : [])),
    );
    for (const id of uses)
      if (!results.has(id)) problems.push(`toolUse ${id} in message ${i} has no toolResult after it`);
    const asked = new Set(
      i > 0 ? (messages[i - 1]!.content ?? []).flatMap((b) => (b.toolUse ? [b.toolUse.toolUseId] : [])) : [],
    );
    for (const b of m.content ?? [])
      if (b.toolResult && !asked.has(b.toolResult.toolUseId))
        problems.push(`toolResult ${b.toolResult.toolUseId} in message ${i} answers no toolUse before it`);
  });
  return problems;
}
