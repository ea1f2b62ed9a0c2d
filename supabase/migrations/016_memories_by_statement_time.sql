-- A memory remembers when it was said (stated_at: when its turn began, which the extraction message
-- carries as turn_at), so reconciliation keeps the later statement current whichever turn's
-- extraction lands first: a message can arrive late, be redelivered after a later turn's, or be
-- reconciled at the same moment as another turn's. A memory with no turn time (stored through a
-- tool or the store API, or before this) was said when it was stored (created_at).
-- Idempotent: the local stack applies every migration at each boot. create or replace keeps each
-- function's grants (014 and 007 set them).

alter table agent_memories add column if not exists stated_at timestamptz;
-- supersede_memories reads a subject's current memories.
create index if not exists agent_memories_current_subject
  on agent_memories (user_id, project_id, (metadata->>'subject')) where superseded_by is null;

-- As 014's, and the memory keeps when it was last said: a fact said again (current or replaced) is
-- brought back, its time the later of the two sayings, one without a time (a tool's, the store
-- API's) said now. Every call answers the memory's row, so the not-found branch of 014 is gone.
create or replace function insert_memory(
  p_user_id           text,
  p_project_id        text,
  p_content           text,
  p_embedding         vector(1024),
  p_category          text default null,
  p_tags              text[] default '{}',
  p_metadata          jsonb default '{}'::jsonb,
  p_source_session_id text default null,
  p_turn_at           timestamptz default null
) returns table (id uuid, created boolean)
language plpgsql
set search_path = public, extensions
as $$
begin
  -- For the trigger (agent_memories_not_erased), in this transaction only.
  perform set_config('agent.memory_turn_at', coalesce(p_turn_at::text, ''), true);
  return query
    insert into agent_memories as m (user_id, project_id, content, embedding, category, tags, metadata, source_session_id, stated_at)
    values (p_user_id, p_project_id, btrim(p_content), p_embedding, p_category, coalesce(p_tags, '{}'), coalesce(p_metadata, '{}'::jsonb), p_source_session_id, p_turn_at)
    on conflict (user_id, project_id, content_hash) do update
      set superseded_by = null,
          updated_at = now(),
          stated_at = greatest(coalesce(m.stated_at, m.created_at), coalesce(excluded.stated_at, now()))
    returning m.id, (m.xmax = 0);
end;
$$;

-- As 007's (same user, same project), and by when each was said: of the new memory, the old ones
-- named and (when the new one has a subject) every current memory of its subject, the one said last
-- stays current and replaces the others, so a late extraction of an earlier turn is kept as replaced.
-- Under a lock per user, project and subject: two turns reconciled at the same moment, each before
-- the other's memory was stored, meet here, and the second to settle sees both. Counts the memories
-- other than the new one that it replaced.
create or replace function supersede_memories(
  p_user_id text,
  p_old_ids uuid[],
  p_new_id  uuid
) returns int
language plpgsql
set search_path = public
as $$
declare
  v_project text;
  v_subject text;
  v_contenders uuid[];
  v_count   int;
begin
  select n.project_id, n.metadata->>'subject' into v_project, v_subject
    from agent_memories n where n.id = p_new_id and n.user_id = p_user_id;
  if not found then
    return 0;
  end if;
  perform pg_advisory_xact_lock(
    hashtextextended(p_user_id || chr(31) || coalesce(v_project, '') || chr(31) || coalesce(v_subject, ''), 16)
  );
  select array_agg(m.id order by coalesce(m.stated_at, m.created_at) desc, m.created_at desc, m.id desc)
    into v_contenders
    from agent_memories m
   where m.user_id = p_user_id and m.project_id is not distinct from v_project
     and m.superseded_by is null
     and (m.id = p_new_id or m.id = any(p_old_ids) or (v_subject is not null and m.metadata->>'subject' = v_subject));
  if v_contenders is null then
    return 0;
  end if;
  with changed as (
    update agent_memories m
       set superseded_by = v_contenders[1], updated_at = now()
     where m.id = any(v_contenders) and m.id <> v_contenders[1]
    returning m.id
  )
  select count(*)::int into v_count from changed where changed.id <> p_new_id;
  return v_count;
end;
$$;
