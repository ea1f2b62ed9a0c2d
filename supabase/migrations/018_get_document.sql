-- One document with its status, by id, for the knowledge admin routes that name one (GET and
-- DELETE /api/knowledge/documents/{source}): they read the whole list before, which only grows
-- (deleted documents stay as tombstones) and takes a request per 1,000 rows over PostgREST.
-- Idempotent: the local stack applies every migration at each boot.

create or replace function get_document(p_document_id text)
returns table (
  document_id text, source text, etag text, deleted boolean, chunk_count int, status text, reason text,
  status_etag text, status_at timestamptz, updated_at timestamptz, sequencer text, status_sequencer text,
  bytes bigint, content_type text
)
language sql
stable
set search_path = public
as $$
  select d.document_id, d.source, d.etag, d.deleted, d.chunk_count, d.status, d.reason, d.status_etag,
         d.status_at, d.updated_at, d.sequencer, d.status_sequencer, d.bytes, d.content_type
    from knowledge_documents d
   where d.document_id = p_document_id;
$$;

revoke all on function get_document(text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function get_document(text) from anon, authenticated;
  end if;
end;
$$;
