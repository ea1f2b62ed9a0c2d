-- What an admin sees of each document besides its status: its size and type, and the chunks it
-- became (GET /api/knowledge/documents). Idempotent: the local stack applies every migration at
-- each boot.

alter table knowledge_documents add column if not exists bytes bigint;
alter table knowledge_documents add column if not exists content_type text;

-- Size and type of the version being processed, recorded when its processing begins, so a
-- document that is then skipped or fails still shows them. A fact about an older event than the
-- status describes is ignored.
create or replace function record_document_facts(
  p_document_id  text,
  p_sequencer    text,
  p_bytes        bigint,
  p_content_type text
) returns void
language sql
set search_path = public
as $$
  update knowledge_documents k
     set bytes = p_bytes, content_type = p_content_type
   where k.document_id = p_document_id
     and (k.status_sequencer is null or k.status_sequencer = p_sequencer
          or s3_sequencer_newer(p_sequencer, k.status_sequencer));
$$;

revoke all on function record_document_facts(text, text, bigint, text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function record_document_facts(text, text, bigint, text) from anon, authenticated;
  end if;
end;
$$;
