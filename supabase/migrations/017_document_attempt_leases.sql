-- An attempt at a document holds it until a time (status_until): until then another delivery of
-- the same content is told the document is busy (it retries later) instead of counting the attempt
-- as one that died. Before, two deliveries of the same bytes at once counted each other as
-- interrupted, and the third was skipped for good. And a skip that says nothing about the content
-- (the object was gone, processing ran out of time, attempts died) no longer holds the content's
-- ETag, so the same bytes uploaded again are processed.
-- Idempotent: the local stack applies every migration at each boot. create or replace keeps each
-- function's grants (008 set them).

alter table knowledge_documents add column if not exists status_until timestamptz;

-- As 008's, with p_until: an attempt at this version still within its time answers 'busy'; one
-- past it (or from before this migration, with none) died, and counts as interrupted.
create or replace function begin_document_attempt(
  p_document_id text,
  p_source      text,
  p_sequencer   text,
  p_etag        text,
  p_until       timestamptz
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
    -- Only to a caller that holds its attempts to a time: the 008 form's callers (functions deployed
    -- before this) know no 'busy'.
    if p_until is not null and d.status = 'processing' and d.status_until > now() then
      return query select 'busy'::text, d.interrupted, null::text;
      return;
    end if;
    update knowledge_documents k
       set status = 'processing', status_sequencer = greatest_sequencer(d.status_sequencer, p_sequencer),
           interrupted = d.interrupted + (case when d.status = 'processing' then 1 else 0 end),
           status_at = now(), status_until = p_until
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
         interrupted = 0, status_at = now(), status_until = p_until
   where k.document_id = p_document_id;
  return query select 'begin'::text, 0, null::text;
end;
$$;

-- The 008 form, for functions deployed before this migration: its attempts hold no time, as before.
create or replace function begin_document_attempt(
  p_document_id text,
  p_source      text,
  p_sequencer   text,
  p_etag        text
) returns table (state text, interrupted int, reason text)
language sql
set search_path = public
as $$
  select * from begin_document_attempt(p_document_id, p_source, p_sequencer, p_etag, null::timestamptz);
$$;

-- As 008's, but the status holds the ETag it is given, none included: a skip for the content
-- names it, one for anything else (the caller sends none) leaves the content free to be tried again.
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
         status_etag = p_etag, status_until = null, status_at = now()
   where k.document_id = p_document_id
     and (k.status_sequencer is null or k.status_sequencer = p_sequencer
          or s3_sequencer_newer(p_sequencer, k.status_sequencer));
end;
$$;

revoke all on function begin_document_attempt(text, text, text, text, timestamptz) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function begin_document_attempt(text, text, text, text, timestamptz) from anon, authenticated;
  end if;
end;
$$;
