-- Knowledge base ingestion from S3: which version of each document is in knowledge_chunks,
-- so a redelivered or out-of-order S3 event cannot replace newer content with older.
-- Idempotent: the local stack applies every migration at each boot.

create table if not exists knowledge_documents (
  document_id text primary key,     -- bucket/key
  source      text not null,        -- the key, shown to users
  sequencer   text not null,        -- S3's per-key event order of the last applied event
  etag        text,
  chunk_count int not null default 0,
  deleted     boolean not null default false,  -- a tombstone: an older create must not bring it back
  updated_at  timestamptz not null default now()
);

alter table knowledge_documents enable row level security;

-- S3 sequencers order the events of one key: right-pad the shorter with zeros, then compare
-- as strings (AWS's documented rule; they are hexadecimal of varying length).
create or replace function s3_sequencer_newer(p_candidate text, p_current text) returns boolean
language sql immutable
as $$
  select p_current is null
      or rpad(upper(p_candidate), greatest(length(p_candidate), length(p_current)), '0')
       > rpad(upper(p_current), greatest(length(p_candidate), length(p_current)), '0');
$$;

-- Whether an event is newer than the last one applied to its document, locking the
-- document's row for the rest of the transaction (a first event creates the row).
create or replace function document_event_is_newer(p_document_id text, p_source text, p_sequencer text) returns boolean
language plpgsql
set search_path = public
as $$
declare
  v_current text;
begin
  insert into knowledge_documents (document_id, source, sequencer, deleted)
  values (p_document_id, p_source, '', true)
  on conflict (document_id) do nothing;
  select sequencer into v_current from knowledge_documents where document_id = p_document_id for update;
  return v_current = '' or s3_sequencer_newer(p_sequencer, v_current);
end;
$$;

-- Replaces a document's chunks in one transaction: readers see the old chunks or the new
-- ones, never half. p_chunks: [{chunk_index, content, metadata, embedding: "[...]"}].
-- Returns 'replaced', or 'stale' when a newer (or the same) event was already applied.
create or replace function replace_document_chunks(
  p_document_id text,
  p_source      text,
  p_sequencer   text,
  p_etag        text,
  p_chunks      jsonb
) returns text
language plpgsql
set search_path = public, extensions
as $$
begin
  if not document_event_is_newer(p_document_id, p_source, p_sequencer) then
    return 'stale';
  end if;

  delete from knowledge_chunks where document_id = p_document_id;
  insert into knowledge_chunks (document_id, source, chunk_index, content, metadata, embedding)
  select p_document_id, p_source, (c ->> 'chunk_index')::int, c ->> 'content',
         coalesce(c -> 'metadata', '{}'::jsonb), (c ->> 'embedding')::vector
    from jsonb_array_elements(p_chunks) as c;

  update knowledge_documents
     set source = p_source, sequencer = p_sequencer, etag = p_etag, deleted = false,
         chunk_count = jsonb_array_length(p_chunks), updated_at = now()
   where document_id = p_document_id;
  return 'replaced';
end;
$$;

-- Removes a document's chunks and leaves a tombstone at this sequencer.
-- Returns 'deleted', or 'stale' when a newer event was already applied.
create or replace function delete_document(p_document_id text, p_source text, p_sequencer text) returns text
language plpgsql
set search_path = public
as $$
begin
  if not document_event_is_newer(p_document_id, p_source, p_sequencer) then
    return 'stale';
  end if;
  delete from knowledge_chunks where document_id = p_document_id;
  update knowledge_documents
     set sequencer = p_sequencer, deleted = true, chunk_count = 0, updated_at = now()
   where document_id = p_document_id;
  return 'deleted';
end;
$$;

revoke all on function replace_document_chunks(text, text, text, text, jsonb) from public;
revoke all on function delete_document(text, text, text) from public;
revoke all on function document_event_is_newer(text, text, text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function replace_document_chunks(text, text, text, text, jsonb) from anon, authenticated;
    revoke all on function delete_document(text, text, text) from anon, authenticated;
    revoke all on function document_event_is_newer(text, text, text) from anon, authenticated;
  end if;
end;
$$;
