import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, isAIMessage, ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { randomUUID } from "node:crypto";
import { AppError, badRequest, notFound, sessionNotFound, storeUnavailable } from "../../shared/errors";
import { ownedSession } from "../../shared/ownership";
import type { QueuePublisher } from "../../shared/queue";
import {
  type ProjectSettings,
  type SessionSettings,
  type SettingsPatch,
  startingSettings,
  withinAssistant,
} from "../../shared/session-settings";
import { toStorableDeep, toStorableText } from "../../shared/text";
import type { ConversationMessage, ConversationStore, TraceStep } from "../../shared/stores/conversations";
import { LeaseLost, RunCancelled, type Lease } from "../../shared/stores/session-lease";
import {
  type DataFileSummary,
  type LeaseHolder,
  OWNER_SORT_KEY,
  type SessionLeaseAttempt,
  type SessionOwners,
  seenSession,
  TURN_TOKENS,
} from "../../shared/stores/session-owners";
import { DynamoDBSaver, type StoredItem } from "../checkpoint/saver";
import type { Admission, UserUsage } from "../../shared/stores/user-usage";
import { removeTurn, repairUnfinished } from "./unfinished-turn";
import type { ExtractionMessage } from "../memory/message";
import type { FileRecord } from "../../shared/files/records";
import { attachedImages, checkInlineImages, imageRefOf, type InlineImage } from "./attachments";
import { checkMessageWrites, messageWrites } from "./command-update";
import { agentFailure } from "./errors";
import { humanContent } from "./images";
import type { ChatGraph } from "./graph";
import { firstWords, nameSession } from "./naming";
import { APPROVE_TOOLS, combinedApproval } from "../tools/approval";
import { type GraphRunObserver, streamGraphRun } from "./graph-run";
import { graphRunSettled } from "./run-settled";
import { TraceCollector } from "./trace";

export interface ChatTurn {
  userId: string;
  projectId?: string;
  /** absent: start a new session */
  sessionId?: string;
  message: string;
  /** the new human message's id, when the client chose one (the Agent Server API's input) */
  messageId?: string;
  /**
   * When the graph checkpoints: once as the run exits (the default, fewest writes), or after every
   * step (the Agent Server API's runs: their history shows each step, and a run stopped by another
   * has its finished steps saved before it stops, for interrupt to keep or rollback to remove).
   */
  durability?: "exit" | "sync";
  /** when another run holds the session: answer 409 at once (default), or wait for it */
  ifBusy?: "reject" | "queue";
  /**
   * With ifBusy "queue": wait for the session as long as the deadline leaves room for a run, not
   * only SESSION_QUEUE_WAIT_MS (which a request's answer must beat). A background run's worker has
   * 15 minutes, and an enqueued run or a cron's firing behind a long run is to run, not fail.
   */
  waitUntilDeadline?: boolean;
  /** a new session's settings, over its project's defaults; refused for an existing session */
  settings?: SettingsPatch;
  /** ready image files of the session, sent with the message */
  attachments?: string[];
  /** small images sent inline, stored as files of the session before the turn runs */
  images?: { media_type: string; bytes: Uint8Array }[];
  /**
   * Epoch ms by which the run must have ended (the function's deadline less what saving the turn
   * needs). Bounds the wait for a busy session, and aborts the model calls, the naming call and the
   * tools once passed, so nothing keeps running after the response is lost.
   */
  deadline?: number;
}

export interface ChatReply {
  reply: string;
  sessionId: string;
  messageId: string;
  sessionName?: string;
  /** what the run did: nodes, model calls, tool calls */
  trace: TraceStep[];
  /** the turn stopped for a tool call's approval, before its answer (reply and messageId empty) */
  interrupted?: boolean;
}

/** LangGraph's Command: resume an interrupt, write to the state, go to a node. */
export interface RunCommand {
  resume?: unknown;
  update?: Record<string, unknown> | [string, unknown][];
  goto?: string | string[];
}

/** How the Agent Server API's runs start and stop, beyond a turn's new message. All optional. */
export interface RunOptions {
  /** instead of a new message: resume an interrupt, update the state, go to a node */
  command?: RunCommand;
  /** run from this checkpoint of the thread: a branch of its history (edit, regenerate) */
  checkpointId?: string;
  interruptBefore?: string[] | "*";
  interruptAfter?: string[] | "*";
  recursionLimit?: number;
  /** written into the metadata of every checkpoint the run writes (the history's filter reads it) */
  metadata?: Record<string, unknown>;
  /** the graph run's id, as its streamed events name it */
  runId?: string;
  /** more of the run's configurable (the assistant's configuration: system prompt, model, approvals) */
  configurable?: Record<string, unknown>;
  /** the session settings the run's assistant allows: it only turns groups off, or makes the run private */
  allowedSettings?: SettingsPatch;
}

/** A run of the chat graph: a turn whose new message is optional (absent: continue from the checkpoint). */
export interface GraphTurn extends Omit<ChatTurn, "message"> {
  message?: string;
  /** tool messages before the new message, answering calls the thread left unanswered */
  answers?: { tool_call_id: string; content: string; name?: string; id?: string }[];
  options?: RunOptions;
  /** Called, and awaited, once the run holds its session and before the graph runs (the Agent Server's run records). */
  begin?: (sessionId: string) => Promise<void>;
  /**
   * Called once the run ended (`error` set when it failed), before its lease is let go: what must
   * be written before another run may start (the Agent Server's thread status and values).
   */
  settle?: (ended: { outcome?: RunOutcome; error?: unknown }) => Promise<void>;
}

export interface RunOutcome {
  sessionId: string;
  /** the answer the run ended with; absent when it stopped for an interrupt or had nothing to do */
  answer?: { reply: string; messageId: string };
  interrupted: boolean;
  sessionName?: string;
  trace: TraceStep[];
}

/** What a streaming client is told as the turn runs. Every callback is optional. */
export interface TurnObserver extends GraphRunObserver {
  onSession?(sessionId: string): void;
  onTrace?(step: TraceStep): void;
  onSessionName?(name: string): void;
}

export interface ChatServiceDeps {
  graph: ChatGraph;
  owners: SessionOwners;
  /** how long an `if_busy: "queue"` request waits for the session */
  queueWaitMs?: number;
  /** names new sessions; absent: their first five words */
  namingModel?: BaseChatModel;
  /** the answers-only history for UIs; absent in a deployment without Supabase */
  conversations?: ConversationStore;
  recursionLimit: number;
  /** receives every finished turn for memory extraction */
  extractionQueue?: QueuePublisher;
  /** a failed turn that could not be taken back out of the graph state is reported here */
  onUndoFailure?: (err: unknown) => void;
  /** a lease that could not be let go is reported here (it expires on its own) and never fails the turn */
  onReleaseFailure?: (err: unknown) => void;
  /** a failed hand-off is reported here and never fails the reply */
  onExtractionPublishFailure?: (err: unknown) => void;
  /** the settings new sessions start with, per project (config PROJECT_SETTINGS) */
  projectSettings?: ProjectSettings;
  /** removes a thread's checkpoints written since a time (the saver's): how a rollback removes a stopped run */
  removeCheckpointsSince?: (threadId: string, since: Date) => Promise<unknown>;
  /** the session's file records, for the images a message attaches; absent: no attachments */
  files?: { get(sessionId: string, fileId: string): Promise<FileRecord | undefined> };
  /** stores a message's inline images as ready files of the session, all or none (shared/files/service.ts) */
  storeImages?: (userId: string, sessionId: string, images: InlineImage[]) => Promise<FileRecord[]>;
  /** the caller's quotas (USER_QUOTAS): a turn is admitted before any model call, its tokens added after */
  usage?: Pick<UserUsage, "admission" | "admit" | "refusal" | "reservation" | "settlement" | "refunding">;
  /** a failed token count is reported here and never fails the reply */
  onUsageFailure?: (err: unknown) => void;
}

const projectMismatch = (project: string | null) =>
  new AppError(
    409,
    "project_mismatch",
    project === null
      ? "this session belongs to no project; send no project_id, or start a new session"
      : `this session belongs to project "${project}"; send that project_id or none, or start a new session`,
  );

/** How long a failed turn waits for its graph run's last writes before it undoes itself (graphRunSettled). */
const SETTLE_MS = 10_000;

/** Least time a run is left after waiting for a busy session: waiting longer would only time out. */
export const MIN_RUN_MS = 10_000;

const turnTimeout = (cause: unknown) =>
  new AppError(504, "turn_timeout", "the answer did not finish within the time this request has", { cause });
const leaseLost = (reason: LeaseLost, cause: unknown) =>
  reason.unrenewed
    ? new AppError(
        503,
        "state_unavailable",
        "the session's lease could not be renewed: the state store did not answer",
        {
          cause,
        },
      )
    : new AppError(409, "session_busy", "another run took this session over before the answer finished", { cause });

const runCancelled = (cause: unknown) =>
  new AppError(409, "run_cancelled", "the run was asked to stop: a cancel, or another run's interrupt or rollback", {
    cause,
  });

const settingsOnExistingSession = () =>
  new AppError(
    400,
    "settings_on_existing_session",
    "settings are set when a session starts; change them with PATCH /api/sessions/{id}",
  );

const unansweredCallsOnly = () =>
  badRequest(
    "invalid_input",
    "input.messages: a tool message must answer a tool call the thread left unanswered, once",
  );

const nothingToRun = () =>
  badRequest("nothing_to_run", "the thread has no state to continue from: send a new message (input.messages)");

/**
 * What a new session's run must be, checked before anything is written (it needs no state): no
 * tool answers (nothing is unanswered yet), a command's message writes the reducer takes, and
 * something to run.
 */
function checkNewSessionStart(turn: GraphTurn): void {
  const command = turn.options?.command;
  if ((turn.answers ?? []).length > 0) throw unansweredCallsOnly();
  checkMessageWrites([], messageWrites(command?.update));
  if (turn.message === undefined && command === undefined) throw nothingToRun();
}

const sessionBusy = () =>
  new AppError(
    409,
    "session_busy",
    'another message in this session is still being answered; retry, or send if_busy: "queue"',
  );

/**
 * One chat turn, for /api/chat and /api/chat/stream alike: check the session, take its
 * lease, run the graph, save the answers-only history with the session's name and the
 * turn's trace, and hand the turn to memory extraction.
 */
export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {}

  /** One turn: a new message, answered. A turn that stopped for approval answers nothing yet. */
  async reply(turn: ChatTurn, observer: TurnObserver = {}): Promise<ChatReply> {
    const outcome = await this.run(turn, observer);
    return {
      reply: outcome.answer?.reply ?? "",
      sessionId: outcome.sessionId,
      messageId: outcome.answer?.messageId ?? "",
      trace: outcome.trace,
      ...(outcome.sessionName ? { sessionName: outcome.sessionName } : {}),
      ...(outcome.interrupted ? { interrupted: true } : {}),
    };
  }

  /**
   * One run of the graph on a session: its new message (when it has one), or a command, or
   * nothing new (a run that continues from the checkpoint: after an interrupt, or from an earlier
   * checkpoint to regenerate). Under the session's lease throughout; what it said is recorded in
   * the transcript, and a new message with its answer goes to memory extraction.
   */
  async run(turn: GraphTurn, observer: TurnObserver = {}): Promise<RunOutcome> {
    const isNew = turn.sessionId === undefined;
    if (!isNew && turn.settings !== undefined) throw settingsOnExistingSession();
    // Attachments are read from the session's files: only once the session is known to be the
    // caller's (ownership before effect; a turn without them needs no read, its lease is the check).
    if (!isNew && turn.attachments?.length) await ownedSession(this.deps.owners, turn.userId, turn.sessionId);
    // Checked before the session is touched: a bad attachment writes nothing.
    const attached = await attachedImages(this.deps.files, turn.sessionId, turn.userId, turn.attachments);
    const inline = await checkInlineImages(turn.images, attached.length);
    if (inline.length > 0 && !this.deps.storeImages)
      throw badRequest("attachments_unavailable", "this deployment has no attachments bucket");
    // A new session's run is checked whole first: it needs no state, and a refusal writes nothing.
    if (isNew) checkNewSessionStart(turn);
    const sessionId = turn.sessionId ?? randomUUID();
    // Named before the lease, which keeps it while the turn runs (LeaseHolder).
    const humanId = turn.message === undefined ? undefined : (turn.messageId ?? randomUUID());
    // One conditional write checks the session is the caller's and takes its lease (the owner
    // record holds the lease); DELETE /api/sessions/{id} takes the same lease, so a turn never
    // writes into a session deleted meanwhile. Under a quota the same request counts the turn,
    // before any model call: over a limit, nothing runs (429) and nothing is written.
    const holder = holderOf(turn, humanId);
    const taken = await (isNew
      ? this.claimSession(sessionId, turn, holder)
      : this.takeSession(sessionId, turn, holder));
    const { lease, projectId, dataFiles, admission } = taken;
    // Refused once admitted: the lease given back, and the turn's count and reservation.
    const refuse = async (err: unknown): Promise<never> => {
      // What the turn read is for its own run only: no later read of the thread may be served it.
      this.reads()?.unprime(sessionId);
      const refund = this.deps.usage?.refunding(turn.userId, admission);
      await lease.release(refund ? { alongside: refund } : {}).catch((error) => {
        this.deps.onReleaseFailure?.(error);
        if (refund) this.deps.onUsageFailure?.(error);
      });
      throw err;
    };
    const settings = withinAssistant(taken.settings, turn.options?.allowedSettings);
    const signal = runSignal(lease.signal, turn.deadline);
    // A failed turn's model calls cost as much as a finished one's: their tokens count too, and a
    // new session's naming call's beside them.
    let namingTokens = 0;
    const settle = async (ended: { outcome?: RunOutcome; error?: unknown }, steps: TraceStep[]) => {
      // A turn that lost its lease neither recorded nor undid what it wrote: its mark stays for the
      // next holder to repair. A recorded turn stands however its release fares: a lease left behind
      // expires, and its mark names a message the transcript has, which the next turn leaves alone.
      // The turn's tokens are counted in the release's own request (one transaction).
      const release = () => {
        const tokens = steps.reduce((n, step) => n + (step.usage?.total_tokens ?? 0), namingTokens);
        const settlement = this.deps.usage?.settlement(turn.userId, tokens, admission);
        return lease
          .release({
            ...(ended.error && lease.signal.reason instanceof LeaseLost ? { mark: "keep" as const } : {}),
            ...(settlement ? { alongside: settlement } : {}),
            // What the session's next turn reserves under a token limit (UserUsage.reservation).
            ...(admission?.reserved ? { set: { [TURN_TOKENS]: Math.round(tokens) } } : {}),
          })
          .catch((err) => {
            this.deps.onReleaseFailure?.(err);
            if (settlement) this.deps.onUsageFailure?.(err);
          });
      };
      this.reads()?.unprime(sessionId);
      try {
        await turn.settle?.(ended);
      } finally {
        await release();
      }
    };
    await this.checkStart(isNew, sessionId, turn).catch(refuse);
    let images = attached;
    if (inline.length > 0) {
      // Stored under the lease, as files of the session (within its file limit): the checkpoint
      // refers to them as to uploads.
      const stored = await this.deps.storeImages!(turn.userId, sessionId, inline).catch(refuse);
      images = [...attached, ...stored.map(imageRefOf)];
    }
    const human =
      turn.message === undefined
        ? undefined
        : new HumanMessage({
            id: humanId!,
            content: humanContent(turn.message, images) as never,
          });
    // Checkpoints from here on are this run's (it holds the session's lease).
    const startedAt = new Date();
    const graphRun = graphRunSettled();
    let ran = false;
    const tracer = new TraceCollector(observer.onTrace && ((step) => observer.onTrace!(step)));
    let outcome: RunOutcome | undefined;
    try {
      await turn.begin?.(sessionId);
      observer.onSession?.(sessionId);
      // Named alongside the run, so the name costs the reply no time.
      const naming =
        isNew && turn.message !== undefined
          ? this.name(turn.message, signal, (n) => {
              namingTokens += n;
            })
          : undefined;
      tracer.record({ type: "settings", name: "session settings", started_at: Date.now(), duration_ms: 0, settings });
      const askedAt = new Date().toISOString();
      ran = true;
      // The session's approvals beside the run's (its assistant's, its own): any of them counts.
      const approval = combinedApproval(taken.approveTools, turn.options?.configurable?.[APPROVE_TOOLS]);
      const options = approval
        ? { ...turn.options, configurable: { ...turn.options?.configurable, [APPROVE_TOOLS]: approval } }
        : turn.options;
      const result = await this.stream(
        sessionId,
        { ...turn, projectId: projectId ?? undefined, ...(options ? { options } : {}) },
        settings,
        dataFiles ?? [],
        human,
        [tracer, graphRun.handler],
        observer,
        signal,
      );
      // A new message must be answered, or stopped for an interrupt; a run with nothing new may end quietly.
      if (human && !result.answer && !result.interrupted)
        throw agentFailure(new Error("the run ended without an answer"), this.deps.recursionLimit);
      // The client's text was checked at the boundary; the model's is made storable rather than
      // refused, so a reply that already streamed is never lost over a stray surrogate or NUL.
      const answer = result.answer && { reply: toStorableText(textOf(result.answer)), messageId: result.answer.id! };
      const sessionName = naming ? toStorableText(await naming) : undefined;
      if (sessionName) observer.onSessionName?.(sessionName);

      const said: ConversationMessage[] = [];
      if (human)
        said.push({
          role: "user",
          content: turn.message!,
          created_at: askedAt,
          message_id: human.id!,
          ...(images.length
            ? { attachments: images.map((i) => ({ file_id: i.file_id, name: i.name, media_type: i.media_type })) }
            : {}),
        });
      if (answer)
        said.push({
          role: "assistant",
          content: answer.reply,
          created_at: new Date().toISOString(),
          message_id: answer.messageId,
        });
      // A turn that lost its lease records nothing: the next holder may already have taken its
      // messages out of the state (repairUnfinished), and would not learn of a transcript written after.
      if (lease.signal.reason instanceof LeaseLost) throw leaseLost(lease.signal.reason, lease.signal.reason);
      const saved =
        said.length === 0
          ? undefined
          : await this.deps.conversations
              ?.recordTurn({
                sessionId,
                userId: turn.userId,
                projectId,
                sessionName: sessionName ?? firstWords(turn.message ?? "New chat"),
                turnId: answer?.messageId ?? human!.id!,
                messages: said,
                trace: toStorableDeep(tracer.steps),
              })
              .catch((err) => {
                throw storeUnavailable(err);
              });
      if (saved === "forbidden") throw sessionNotFound();
      ran = false; // recorded: from here on the turn stands
      // Nothing of a private session, or of one with memory off, is remembered: it never reaches
      // the extraction queue. A run that answered without a new message (a resumed one) is handed
      // on with the thread's last human message.
      const asked = turn.message ?? lastHumanText(result.values?.messages);
      if (answer && asked !== undefined && settings.memory && !settings.private)
        await this.handOffForExtraction({
          user_id: turn.userId,
          project_id: projectId,
          session_id: sessionId,
          turn_id: answer.messageId,
          user_message: asked,
          assistant_reply: answer.reply,
          turn_at: startedAt.toISOString(),
        });
      outcome = {
        sessionId,
        interrupted: result.interrupted,
        trace: tracer.steps,
        ...(answer ? { answer } : {}),
        ...(sessionName ? { sessionName } : {}),
      };
    } catch (err) {
      // A turn is in both the graph state and the transcript, or in neither. A turn that lost its
      // lease undoes nothing (another run may be writing now): it keeps its mark on the owner record
      // instead (settle), and whoever takes the lease next takes the turn out (repairUnfinished). A run
      // stopped by another (RunCancelled) still holds the lease: "interrupt" keeps what it wrote
      // in the graph state, "rollback" takes it back out. A run without a new message has nothing
      // to take back: what it wrote stays, as LangGraph leaves a failed run's steps.
      const reason: unknown = lease.signal.reason;
      const rollback = reason instanceof RunCancelled && reason.action === "rollback";
      const keep = lease.signal.aborted && !rollback;
      // Nothing is undone, and the lease not let go, before the graph's own last writes landed.
      if (ran) await graphRun.wait(SETTLE_MS);
      if (ran && rollback && this.deps.removeCheckpointsSince) {
        // Rollback removes the stopped run's checkpoints, so its steps are not in the history either.
        await this.deps.removeCheckpointsSince(sessionId, startedAt).catch((e) => this.deps.onUndoFailure?.(e));
      } else if (ran && !keep && human) await this.undoTurn(sessionId, human.id!);
      await settle({ error: err }, tracer.steps);
      throw err;
    }
    await settle({ outcome }, tracer.steps);
    return outcome;
  }

  /**
   * What a run starts from, checked under its lease before it runs, reading the state only when
   * something depends on it (a plain turn reads nothing here):
   * - a named checkpoint must be one of the thread's (404);
   * - a run with nothing new (no message, no command) must have a state to continue from (400);
   * - a command's message writes must be ones the messages reducer takes (400, ./command-update.ts);
   * - message ids are unique within a thread: LangGraph's messages reducer replaces a message whose
   *   id it already holds, so a client-chosen id equal to an existing one would rewrite history in
   *   place (409). Checked against the state the message joins: the checkpoint a branch starts from.
   */
  private async checkStart(isNew: boolean, sessionId: string, turn: GraphTurn) {
    if (isNew) return; // checkNewSessionStart, before anything was written
    const { checkpointId, command } = turn.options ?? {};
    const continues = turn.message === undefined && command === undefined;
    const checksId = turn.message !== undefined && turn.messageId !== undefined;
    const answers = turn.answers ?? [];
    const writes = messageWrites(command?.update);
    if (!checkpointId && !continues && !checksId && answers.length === 0 && writes.length === 0) return;
    let state: Awaited<ReturnType<ChatGraph["getState"]>>;
    try {
      state = await this.deps.graph.getState({
        configurable: {
          thread_id: sessionId,
          ...(checkpointId ? { checkpoint_id: checkpointId, checkpoint_ns: "" } : {}),
        },
      });
    } catch (err) {
      throw agentFailure(err, this.deps.recursionLimit);
    }
    // LangGraph answers a checkpoint it cannot find with an empty snapshot; a stored one has its time.
    if (state.createdAt === undefined) {
      if (checkpointId) throw notFound("checkpoint_not_found", "no such checkpoint in this thread");
      if (continues) throw nothingToRun();
    }
    const messages = (state.values as { messages?: BaseMessage[] }).messages ?? [];
    // Tool messages in the input answer only calls the state left unanswered, once each.
    const answered = new Set(messages.map((m) => (m as ToolMessage).tool_call_id).filter(Boolean));
    const open = new Set(
      messages
        .flatMap((m) => (isAIMessage(m) ? (m.tool_calls ?? []).map((c) => c.id ?? "") : []))
        .filter((id) => !answered.has(id)),
    );
    if (answers.some((a) => !open.delete(a.tool_call_id))) throw unansweredCallsOnly();
    checkMessageWrites(messages, writes);
    if (checksId && messages.some((m) => m.id === turn.messageId))
      throw new AppError(409, "message_id_exists", "this thread already has a message with this id; send a new id");
  }

  /**
   * Takes a failed turn back out of the graph state: its human message and everything after it
   * are removed (LangGraph's RemoveMessage, written as a new checkpoint by the agent node). The
   * order of writes is state first (the run), transcript second (recordTurn); this undoes the
   * first when the second, or the run itself, fails. If the undo cannot be written either (the
   * state store is down), the history repair before every model call (./history.ts) still gives
   * the model a valid conversation, and the failure is reported.
   */
  private async undoTurn(sessionId: string, humanId: string) {
    await removeTurn(this.deps.graph, sessionId, humanId).catch((err) => this.deps.onUndoFailure?.(err));
  }

  /**
   * Runs the graph on the new message only (history comes from the checkpoint), or on the run's
   * command, or on nothing new; with the run's options (a checkpoint to branch from, interrupts,
   * a recursion limit, checkpoint metadata). Tokens are asked for only when someone listens.
   */
  private async stream(
    sessionId: string,
    turn: GraphTurn,
    settings: SessionSettings,
    dataFiles: DataFileSummary[],
    human: HumanMessage | undefined,
    callbacks: BaseCallbackHandler[],
    observer: TurnObserver,
    signal: AbortSignal,
  ) {
    const options = turn.options ?? {};
    const recursionLimit = options.recursionLimit ?? this.deps.recursionLimit;
    // A command's node names and state keys are the client's: LangGraph checks them as it runs.
    const answers = (turn.answers ?? []).map(
      (a) =>
        new ToolMessage({ tool_call_id: a.tool_call_id, content: a.content, name: a.name, id: a.id ?? randomUUID() }),
    );
    const input = (
      options.command ? new Command(options.command) : human ? { messages: [...answers, human] } : null
    ) as never;
    try {
      return await streamGraphRun(
        this.deps.graph,
        input,
        {
          configurable: {
            ...options.configurable,
            thread_id: sessionId,
            session_id: sessionId,
            user_id: turn.userId,
            project_id: turn.projectId,
            // when the run began, for what its tools write (a memory's turn: Scope.turnAt)
            turn_at: new Date().toISOString(),
            settings,
            // what the prompt lists of the session's data files (graph/chat/runtime.ts)
            data_files: dataFiles,
            ...(options.checkpointId ? { checkpoint_id: options.checkpointId, checkpoint_ns: "" } : {}),
          },
          recursionLimit,
          callbacks,
          signal,
          durability: turn.durability ?? "exit",
          ...(options.interruptBefore ? { interruptBefore: options.interruptBefore as never } : {}),
          ...(options.interruptAfter ? { interruptAfter: options.interruptAfter as never } : {}),
          ...(options.metadata ? { metadata: options.metadata } : {}),
          ...(options.runId ? { runId: options.runId } : {}),
        },
        observer,
      );
    } catch (err) {
      if (signal.aborted)
        throw signal.reason instanceof RunCancelled
          ? runCancelled(err)
          : signal.reason instanceof LeaseLost
            ? leaseLost(signal.reason, err)
            : turnTimeout(err);
      throw agentFailure(err, recursionLimit);
    }
  }

  private name(message: string, signal: AbortSignal, onTokens: (tokens: number) => void): Promise<string> {
    return this.deps.namingModel
      ? nameSession(this.deps.namingModel, message, { signal, onTokens })
      : Promise.resolve(firstWords(message));
  }

  /** An `if_busy: "queue"` request waits no longer than its deadline leaves room for a run. */
  private queueWait(deadline: number | undefined, untilDeadline = false): number {
    const configured = this.deps.queueWaitMs ?? 20_000;
    if (deadline === undefined) return configured;
    const room = Math.max(0, deadline - Date.now() - MIN_RUN_MS);
    return untilDeadline ? room : Math.min(configured, room);
  }

  /** The reply never waits for extraction: only for the queue to accept the turn, and never fails on it. */
  private async handOffForExtraction(message: ExtractionMessage) {
    if (!this.deps.extractionQueue) return;
    try {
      await this.deps.extractionQueue.publish(message);
    } catch (err) {
      this.deps.onExtractionPublishFailure?.(err);
    }
  }

  /**
   * A new session is claimed for the caller, in the turn's project for good, its settings set, its
   * lease held, and the turn counted, in one request. It has no state: the graph's read of it is
   * answered without one (DynamoDBSaver.prime).
   */
  private async claimSession(sessionId: string, turn: GraphTurn, holder: LeaseHolder): Promise<TakenSession> {
    const projectId = turn.projectId ?? null;
    const settings = startingSettings(this.deps.projectSettings ?? {}, projectId, turn.settings);
    const { usage } = this.deps;
    const counted = usage?.admission(turn.userId, projectId, usage.reservation(projectId, undefined));
    let claimed: Awaited<ReturnType<SessionOwners["claimLeased"]>>;
    try {
      claimed = await this.deps.owners.claimLeased(
        sessionId,
        turn.userId,
        projectId,
        settings,
        holder,
        counted?.update,
      );
    } catch (err) {
      throw agentFailure(err, this.deps.recursionLimit);
    }
    if (claimed.refused) throw await usage!.refusal(turn.userId, projectId, counted!.admission.at);
    if (!claimed.lease)
      throw agentFailure(new Error(`session id ${sessionId} already taken`), this.deps.recursionLimit);
    this.reads()?.prime(sessionId, undefined);
    return { lease: claimed.lease, projectId, settings, ...(counted ? { admission: counted.admission } : {}) };
  }

  /** The graph's checkpointer, where it reads a session's owner record with its state (the DynamoDB saver). */
  private reads(): DynamoDBSaver | undefined {
    const saver = this.deps.graph.checkpointer;
    return saver instanceof DynamoDBSaver ? saver : undefined;
  }

  /**
   * An existing session of the caller's, its lease held, the project it runs in, and the turn
   * counted. A session's project is fixed when it starts: a turn naming another gets 409
   * project_mismatch (at once, even while the session is busy), one naming none runs in the
   * session's. (A session recorded before projects were kept takes the turn's.)
   *
   * One Query reads the session's owner record with its latest checkpoint (latestWith), then one
   * write takes the lease, conditional on nobody having taken it since (its generation), with the
   * turn's count beside it in one transaction; the graph then starts from what was read.
   * Ownership is checked on the record before the state read with it is decoded.
   */
  private async takeSession(sessionId: string, turn: GraphTurn, holder: LeaseHolder): Promise<TakenSession> {
    const reads = this.reads();
    if (!reads) return this.takeSessionThenCount(sessionId, turn, holder);
    const { usage } = this.deps;
    const wait = turn.ifBusy === "queue" ? this.queueWait(turn.deadline, turn.waitUntilDeadline) : 0;
    const deadline = Date.now() + wait;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      let read: Awaited<ReturnType<typeof reads.latestWith>>;
      try {
        // The state is decoded only for a session that is the caller's and free to take.
        const owner = (above: StoredItem[]) => seenSession(above.find((item) => item.sk === OWNER_SORT_KEY));
        read = await reads.latestWith(sessionId, OWNER_SORT_KEY, {
          accept: (above) => {
            const seen = owner(above);
            return seen?.session.userId === turn.userId && !seen.busy;
          },
          legacy: (above) => owner(above)?.mayHaveLegacyState ?? true,
        });
      } catch (err) {
        throw agentFailure(err, this.deps.recursionLimit);
      }
      const seen = seenSession(read.above.find((item) => item.sk === OWNER_SORT_KEY));
      if (!seen || seen.session.userId !== turn.userId || seen.session.deleting === "stalled") throw sessionNotFound();
      const { session } = seen;
      if (session.projectId !== undefined && turn.projectId !== undefined && turn.projectId !== session.projectId)
        throw projectMismatch(session.projectId!);
      const projectId = session.projectId === undefined ? (turn.projectId ?? null) : session.projectId;
      if (!seen.busy) {
        const counted = usage?.admission(turn.userId, projectId, usage.reservation(projectId, seen.lastTurnTokens));
        let attempt: Awaited<ReturnType<SessionOwners["leaseAfterRead"]>>;
        try {
          attempt = await this.deps.owners.leaseAfterRead(sessionId, turn.userId, holder, seen, counted?.update);
        } catch (err) {
          throw agentFailure(err, this.deps.recursionLimit);
        }
        if (attempt.refused) throw await usage!.refusal(turn.userId, projectId, counted!.admission.at);
        if (attempt.lease) {
          // First, before anything can refuse the turn and let the lease go: the mark is this write's
          // now. Its repair writes the state, so the graph reads it afresh; otherwise it starts
          // from what was read.
          if (attempt.unfinished) {
            // Given up (503), the count is given back with the lease: the turn ran nothing.
            const refund = usage?.refunding(turn.userId, counted?.admission);
            await repairUnfinished(this.deps, sessionId, attempt.lease, attempt.unfinished, {
              ...(refund ? { alongside: refund } : {}),
            });
          } else reads.prime(sessionId, read.tuple);
          // The record as the lease write found it, where it says (settings changed since the read).
          const taken = attempt.session ?? session;
          return {
            lease: attempt.lease,
            projectId,
            settings: taken.settings,
            dataFiles: taken.dataFiles,
            ...(taken.approveTools ? { approveTools: taken.approveTools } : {}),
            ...(counted ? { admission: counted.admission } : {}),
          };
        }
        // Taken since the read: read again at once (it may be free again, or busy now).
        if (Date.now() < deadline || delay < 200) continue;
      }
      if (Date.now() + delay > deadline) throw sessionBusy();
      await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
    }
  }

  /**
   * takeSession where the checkpointer cannot read the owner record with the state (a saver other
   * than the DynamoDB one): the lease's conditional write returns the record, then the turn is
   * counted in a request of its own, its lease given back when refused.
   */
  private async takeSessionThenCount(sessionId: string, turn: GraphTurn, holder: LeaseHolder): Promise<TakenSession> {
    let attempt: SessionLeaseAttempt;
    try {
      attempt =
        turn.ifBusy === "queue"
          ? await this.deps.owners.leaseWaiting(
              sessionId,
              turn.userId,
              this.queueWait(turn.deadline, turn.waitUntilDeadline),
              holder,
            )
          : await this.deps.owners.lease(sessionId, turn.userId, holder);
    } catch (err) {
      throw agentFailure(err, this.deps.recursionLimit);
    }
    const { session, lease } = attempt;
    if (!session) {
      await lease?.release();
      throw sessionNotFound();
    }
    // First, before anything can refuse the turn and let the lease go: the mark is this write's now.
    if (lease && attempt.unfinished) await repairUnfinished(this.deps, sessionId, lease, attempt.unfinished);
    const mismatch =
      session.projectId !== undefined && turn.projectId !== undefined && turn.projectId !== session.projectId;
    if (mismatch) {
      await lease?.release();
      throw projectMismatch(session.projectId!);
    }
    if (!lease) throw sessionBusy();
    const projectId = session.projectId === undefined ? (turn.projectId ?? null) : session.projectId;
    const admission = await this.deps.usage?.admit(turn.userId, projectId).catch(async (err) => {
      await lease.release();
      throw err;
    });
    return {
      lease,
      projectId,
      settings: session.settings,
      dataFiles: session.dataFiles,
      ...(session.approveTools ? { approveTools: session.approveTools } : {}),
      ...(admission ? { admission } : {}),
    };
  }
}

interface TakenSession {
  lease: Lease;
  /** the turn's count under the caller's quotas (none where no limit applies) */
  admission?: Admission;
  projectId: string | null;
  settings: SessionSettings;
  /** the session's ready data files, from its owner record (a new session has none) */
  dataFiles?: DataFileSummary[];
  /** the tools whose calls wait for approval in this session */
  approveTools?: string[] | "*";
}

/** A turn's lease holder: its Agent Server run, and the message it adds (none for a run that continues). */
const holderOf = (turn: GraphTurn, messageId: string | undefined): LeaseHolder => ({
  ...(turn.options?.runId ? { runId: turn.options.runId } : {}),
  turn: messageId ? { messageId } : {},
});

/** Aborted when the lease is lost or the deadline passes, whichever comes first. */
function runSignal(leaseSignal: AbortSignal, deadline: number | undefined): AbortSignal {
  if (deadline === undefined) return leaseSignal;
  return AbortSignal.any([leaseSignal, AbortSignal.timeout(Math.max(0, deadline - Date.now()))]);
}

/** The text of a message: string content, or the text blocks of structured content. */
export function textOf(message: BaseMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) =>
      typeof block === "string" ? block : block.type === "text" ? String((block as { text: string }).text) : "",
    )
    .join("");
}

/** The text of the last human message among these, for a resumed run's extraction. */
function lastHumanText(messages: BaseMessage[] | undefined): string | undefined {
  const human = messages?.findLast((m) => m.getType() === "human");
  return human ? toStorableText(textOf(human)) : undefined;
}
