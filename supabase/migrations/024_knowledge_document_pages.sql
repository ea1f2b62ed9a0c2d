-- The knowledge base's documents a page at a time (GET /api/knowledge/documents?limit=&cursor=),
-- in document_id order after the last one a page ended on. The list only grows (tombstones and
-- skipped documents stay), so the whole table in one response ran past Lambda's 6 MB; filtering
-- by prefix and by deletion happens here, so a page is never short for rows it dropped. The rows
-- are list_documents' (010). Idempotent: the local stack applies every migration at each boot.

create or replace function list_documents_page(
  p_bucket text, p_prefix text, p_after text, p_limit int, p_deleted boolean
)
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
   where starts_with(d.document_id, p_bucket || '/' || p_prefix)
     and (p_after is null or d.document_id > p_after)
     and (p_deleted or d.status is distinct from 'deleted')
   order by d.document_id
   limit greatest(1, least(p_limit, 1001));
$$;

do $$
begin
  revoke all on function list_documents_page(text, text, text, int, boolean) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function list_documents_page(text, text, text, int, boolean) from anon, authenticated;
  end if;
end;
$$;
