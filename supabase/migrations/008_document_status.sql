-- What became of each document's latest version: every document ends 'ingested', 'skipped' (with
-- the reason) or 'failed' (with the error), or 'deleted'; 'processing' while a worker has it. An
-- operator (or an admin API) reads it from knowledge_documents.
-- Idempotent: the local stack applies every migration at each boot.

alter table knowledge_documents add column if not exists status text;
alter table knowledge_documents add column if not exists reason text;
-- the event and content (S3 ETag) the status describes: may be newer than the applied `sequencer`
alter table knowledge_documents add column if not exists status_sequencer text;
alter table knowledge_documents add column if not exists status_etag text;
-- attempts at this version that began and were never finished (the process died, ran out of
-- memory or time): after two, the version is skipped instead of retried into another crash
alter table knowledge_documents add column if not exists interrupted int not null default 0;
alter table knowledge_documents add column if not exists status_at timestamptz;

do $$
begin
  if not exists (select 1 from pg_constraint where conname = 'knowledge_documents_status_check') then
    alter table knowledge_documents add constraint knowledge_documents_status_check
      check (status in ('processing', 'ingested', 'skipped', 'failed', 'deleted'));
  end if;
end;
$$;

-- Whether (p_sequencer, p_etag) is the version a document's status describes: the same event,
-- or the same content (an S3 retry or a local restart re-sends it under a new event).
create or replace function document_status_is_for(d knowledge_documents, p_sequencer text, p_etag text)
returns boolean
language sql immutable
as $$
  select d.status_sequencer = p_sequencer or (p_etag is not null and d.status_etag = p_etag);
$$;

-- Starts processing a created object's version. Returns one row:
--   state 'stale'    an event as new or newer was already applied or is being processed: do nothing
--   state 'skipped'  this version was already skipped (reason given): do not process it again
--   state 'begin'    go ahead; interrupted = earlier attempts at it that never finished
create or replace function begin_document_attempt(
  p_document_id text,
  p_source      text,
  p_sequencer   text,
  p_etag        text
) returns table (state text, interrupted int, reason text)
language plpgsql
set search_path = public
as $$
declare
  d knowledge_documents;
begin
  insert into knowledge_documents (document_id, source, sequencer, deleted)
  values (p_document_id, p_source, '', true)
  on conflict (document_id) do nothing;
  select * into d from knowledge_documents k where k.document_id = p_document_id for update;

  if d.sequencer <> '' and not s3_sequencer_newer(p_sequencer, d.sequencer) then
    return query select 'stale'::text, 0, null::text;
    return;
  end if;
  if document_status_is_for(d, p_sequencer, p_etag) then
    if d.status = 'skipped' then
      return query select 'skipped'::text, d.interrupted, d.reason;
      return;
    end if;
    update knowledge_documents k
       set status = 'processing', status_sequencer = greatest_sequencer(d.status_sequencer, p_sequencer),
           interrupted = d.interrupted + (case when d.status = 'processing' then 1 else 0 end),
           status_at = now()
     where k.document_id = p_document_id
    returning k.interrupted into d.interrupted;
    return query select 'begin'::text, d.interrupted, null::text;
    return;
  end if;
  if d.status_sequencer is not null and not s3_sequencer_newer(p_sequencer, d.status_sequencer) then
    return query select 'stale'::text, 0, null::text;
    return;
  end if;
  update knowledge_documents k
     set status = 'processing', reason = null, status_sequencer = p_sequencer, status_etag = p_etag,
         interrupted = 0, status_at = now()
   where k.document_id = p_document_id;
  return query select 'begin'::text, 0, null::text;
end;
$$;

create or replace function greatest_sequencer(a text, b text) returns text
language sql immutable
as $$
  select case when a is null or s3_sequencer_newer(b, a) then b else a end;
$$;

-- Records how a version ended when it did not replace the chunks: 'skipped' or 'failed'.
-- A newer version's status is never overwritten by an older one's.
create or replace function record_document_outcome(
  p_document_id text,
  p_source      text,
  p_sequencer   text,
  p_etag        text,
  p_status      text,
  p_reason      text
) returns void
language plpgsql
set search_path = public
as $$
begin
  if p_status not in ('skipped', 'failed') then
    raise exception 'record_document_outcome: status must be skipped or failed, not %', p_status;
  end if;
  insert into knowledge_documents (document_id, source, sequencer, deleted)
  values (p_document_id, p_source, '', true)
  on conflict (document_id) do nothing;
  update knowledge_documents k
     set status = p_status, reason = left(p_reason, 2000), status_sequencer = p_sequencer,
         status_etag = coalesce(p_etag, k.status_etag), status_at = now()
   where k.document_id = p_document_id
     and (k.status_sequencer is null or k.status_sequencer = p_sequencer
          or s3_sequencer_newer(p_sequencer, k.status_sequencer));
end;
$$;

-- Applying an event (replace_document_chunks, delete_document move `sequencer`) settles the
-- status in the same transaction, unless a newer version is already being processed.
create or replace function knowledge_documents_settle_status() returns trigger
language plpgsql
set search_path = public
as $$
begin
  if new.sequencer is distinct from old.sequencer and new.sequencer <> ''
     and (new.status_sequencer is null or not s3_sequencer_newer(new.status_sequencer, new.sequencer)) then
    new.status := case when new.deleted then 'deleted' else 'ingested' end;
    new.reason := null;
    new.status_sequencer := new.sequencer;
    new.status_etag := new.etag;
    new.interrupted := 0;
    new.status_at := now();
  end if;
  return new;
end;
$$;

drop trigger if exists knowledge_documents_settle_status on knowledge_documents;
create trigger knowledge_documents_settle_status
  before update on knowledge_documents
  for each row execute function knowledge_documents_settle_status();

revoke all on function begin_document_attempt(text, text, text, text) from public;
revoke all on function record_document_outcome(text, text, text, text, text, text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function begin_document_attempt(text, text, text, text) from anon, authenticated;
    revoke all on function record_document_outcome(text, text, text, text, text, text) from anon, authenticated;
  end if;
end;
$$;
