-- Every read and write the stores make is a function of the migrations, called by name with named
-- arguments (PostgREST's /rpc/<name> in production, the same call over SQL locally): these are the
-- ones that were table reads and deletes written twice, once in SQL and once in PostgREST's
-- filter syntax. Each returns what the table read returned, so a store maps one shape.
-- Idempotent: the local stack applies every migration at each boot.

-- A bucket's documents with their status, by key (the knowledge admin routes).
create or replace function list_documents(p_bucket text)
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
   where starts_with(d.document_id, p_bucket || '/')
   order by d.document_id;
$$;

-- A document's chunks in order, for an admin's preview (no embeddings: they are large and unread).
create or replace function document_chunks(p_document_id text)
returns table (chunk_index int, metadata jsonb, content text)
language sql
stable
set search_path = public
as $$
  select c.chunk_index, c.metadata, c.content
    from knowledge_chunks c
   where c.document_id = p_document_id
   order by c.chunk_index;
$$;

-- A user's own memories, newest first: current ones only unless p_superseded, optionally of one
-- category or carrying one tag.
create or replace function list_memories(
  p_user_id     text,
  p_limit       int,
  p_category    text default null,
  p_tag         text default null,
  p_superseded  boolean default false
) returns table (
  id uuid, user_id text, project_id text, content text, category text, tags text[], metadata jsonb,
  created_at timestamptz, updated_at timestamptz, superseded_by uuid
)
language sql
stable
set search_path = public
as $$
  select m.id, m.user_id, m.project_id, m.content, m.category, m.tags, m.metadata, m.created_at,
         m.updated_at, m.superseded_by
    from agent_memories m
   where m.user_id = p_user_id
     and (coalesce(p_superseded, false) or m.superseded_by is null)
     and (p_category is null or m.category = p_category)
     and (p_tag is null or m.tags @> array[p_tag])
   order by m.created_at desc, m.id
   limit p_limit;
$$;

-- Deletes one of the user's own memories; false when they have none with that id.
create or replace function delete_memory(p_user_id text, p_id uuid) returns boolean
language sql
set search_path = public
as $$
  with gone as (
    delete from agent_memories m where m.id = p_id and m.user_id = p_user_id returning 1
  )
  select exists (select 1 from gone);
$$;

-- A user's plan, usage and preferences: one row, or none for a user without a context.
create or replace function get_user_context(p_user_id text)
returns table (user_id text, plan text, usage jsonb, preferences jsonb, updated_at timestamptz)
language sql
stable
set search_path = public
as $$
  select c.user_id, c.plan, c.usage, c.preferences, c.updated_at from user_context c where c.user_id = p_user_id;
$$;

-- One cheap round trip for health checks: it fails only when the database cannot be reached.
create or replace function ping() returns boolean
language sql
stable
as $$
  select true;
$$;

-- A session's answers-only history: one row, or none. The caller checks user_id is its own.
create or replace function get_conversation(p_session_id text)
returns table (session_id text, user_id text, messages jsonb, created_at timestamptz, updated_at timestamptz)
language sql
stable
set search_path = public
as $$
  select c.session_id, c.user_id, c.messages, c.created_at, c.updated_at
    from agent_conversations c
   where c.session_id = p_session_id;
$$;

-- The traces of a session's assistant messages, one row per message.
create or replace function session_traces(p_session_id text)
returns table (message_id text, steps jsonb)
language sql
stable
set search_path = public
as $$
  select t.message_id, t.steps from execution_traces t where t.session_id = p_session_id;
$$;

revoke all on function list_documents(text) from public;
revoke all on function document_chunks(text) from public;
revoke all on function list_memories(text, int, text, text, boolean) from public;
revoke all on function delete_memory(text, uuid) from public;
revoke all on function get_user_context(text) from public;
revoke all on function ping() from public;
revoke all on function get_conversation(text) from public;
revoke all on function session_traces(text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function list_documents(text) from anon, authenticated;
    revoke all on function document_chunks(text) from anon, authenticated;
    revoke all on function list_memories(text, int, text, text, boolean) from anon, authenticated;
    revoke all on function delete_memory(text, uuid) from anon, authenticated;
    revoke all on function get_user_context(text) from anon, authenticated;
    revoke all on function ping() from anon, authenticated;
    revoke all on function get_conversation(text) from anon, authenticated;
    revoke all on function session_traces(text) from anon, authenticated;
  end if;
end;
$$;
